// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IRfqReactor, ISignatureTransfer, RfqOrder, SignedOrder} from "./Interfaces.sol";
import {SafeTransfer} from "./SafeTransfer.sol";

/// @title RfqReactor
/// @notice Settles maker-signed RFQ orders. The caller (msg.sender) is the taker: for each order
/// it receives the maker's input tokens through the signature-transfer contract and pays the
/// maker's output plus the fee from its own ERC-20 allowance to this contract.
/// Deliberately absent: callbacks, a taker signature and tx.origin/EOA checks, so an
/// aggregator router can fill inside its user's transaction exactly like a wallet can.
contract RfqReactor is IRfqReactor {
    using SafeTransfer for address;

    /// @notice EIP-712 type of the order; its struct hash is the order hash and the witness.
    bytes32 public constant ORDER_TYPEHASH = keccak256(
        "RfqOrder(address reactor,address maker,address taker,address inputToken,uint256 inputAmount,"
        "address outputToken,uint256 outputAmount,uint256 feeAmount,uint256 nonce,uint256 deadline)"
    );

    /// @notice Appended by SignatureTransfer to its PermitWitnessTransferFrom stub: names the
    /// witness member, then lists the referenced types in EIP-712 (alphabetical) order.
    string public constant WITNESS_TYPE_STRING =
        "RfqOrder witness)"
        "RfqOrder(address reactor,address maker,address taker,address inputToken,uint256 inputAmount,"
        "address outputToken,uint256 outputAmount,uint256 feeAmount,uint256 nonce,uint256 deadline)"
        "TokenPermissions(address token,uint256 amount)";

    ISignatureTransfer public immutable signatureTransfer;
    address public immutable feeRecipient;

    // Transient (EIP-1153) lock: cleared automatically at the end of the transaction and
    // costs no storage refund juggling.
    bool private transient _locked;

    /// @notice One per filled order; `taker` is the msg.sender that settled it. Together with
    /// the transaction hash and log index this is everything needed to reconcile a fill.
    event Fill(
        bytes32 indexed orderHash,
        address indexed maker,
        address indexed taker,
        address inputToken,
        uint256 inputAmount,
        address outputToken,
        uint256 outputAmount,
        uint256 feeAmount
    );

    error WrongReactor();
    error DeadlinePassed();
    error WrongTaker();
    error EmptyBatch();
    error Reentrancy();

    modifier nonReentrant() {
        if (_locked) revert Reentrancy();
        _locked = true;
        _;
        _locked = false;
    }

    constructor(ISignatureTransfer signatureTransfer_, address feeRecipient_) {
        signatureTransfer = signatureTransfer_;
        feeRecipient = feeRecipient_;
    }

    function execute(SignedOrder calldata order) external nonReentrant {
        _fill(order);
    }

    /// @notice Fills every order in one transaction; any failing order reverts them all.
    function executeBatch(SignedOrder[] calldata orders) external nonReentrant {
        if (orders.length == 0) revert EmptyBatch();
        for (uint256 i; i < orders.length; ++i) {
            _fill(orders[i]);
        }
    }

    /// @notice The order hash (EIP-712 struct hash) that makers sign as the Permit2 witness.
    function hashOrder(RfqOrder calldata order) external pure returns (bytes32) {
        return _hashOrder(order);
    }

    function _fill(SignedOrder calldata signed) private {
        RfqOrder memory order = abi.decode(signed.order, (RfqOrder));
        // An order signed for another reactor deployment must not be replayable here.
        if (order.reactor != address(this)) revert WrongReactor();
        if (block.timestamp > order.deadline) revert DeadlinePassed();
        if (order.taker != address(0) && order.taker != msg.sender) revert WrongTaker();

        bytes32 orderHash = _hashOrder(order);

        // Maker side: the permit is bound to this reactor as spender and to the order via the
        // witness; it also burns the maker's nonce, so the order fills at most once.
        signatureTransfer.permitWitnessTransferFrom(
            ISignatureTransfer.PermitTransferFrom({
                permitted: ISignatureTransfer.TokenPermissions({token: order.inputToken, amount: order.inputAmount}),
                nonce: order.nonce,
                deadline: order.deadline
            }),
            ISignatureTransfer.SignatureTransferDetails({to: msg.sender, requestedAmount: order.inputAmount}),
            order.maker,
            orderHash,
            WITNESS_TYPE_STRING,
            signed.sig
        );

        // Taker side: plain transferFrom from msg.sender (needs an allowance to this reactor).
        if (order.outputAmount != 0) {
            order.outputToken.safeTransferFrom(msg.sender, order.maker, order.outputAmount);
        }
        if (order.feeAmount != 0) {
            order.outputToken.safeTransferFrom(msg.sender, feeRecipient, order.feeAmount);
        }

        emit Fill(
            orderHash,
            order.maker,
            msg.sender,
            order.inputToken,
            order.inputAmount,
            order.outputToken,
            order.outputAmount,
            order.feeAmount
        );
    }

    function _hashOrder(RfqOrder memory order) private pure returns (bytes32) {
        // RfqOrder has only static members, so abi.encode(struct) lays its fields out inline,
        // word by word: exactly EIP-712's encodeData.
        return keccak256(abi.encode(ORDER_TYPEHASH, order));
    }
}
