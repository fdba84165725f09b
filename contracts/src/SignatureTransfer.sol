// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC1271, ISignatureTransfer} from "./Interfaces.sol";
import {SafeTransfer} from "./SafeTransfer.sol";

/// @title SignatureTransfer
/// @notice A Permit2-compatible signature transfer contract: an owner signs an EIP-712 permit
/// (optionally with a witness), and the spender named in the signature moves the permitted
/// token from the owner once. Same domain, type strings, nonce scheme and error names as
/// Uniswap's Permit2 SignatureTransfer, so wallets and SDKs made for Permit2 work against it.
/// Owners grant this contract an ordinary ERC-20 allowance once; each transfer needs a fresh
/// signature with an unused nonce.
contract SignatureTransfer is ISignatureTransfer {
    using SafeTransfer for address;

    // Permit2's domain has a name but no version field; keeping that exact shape is what makes
    // signatures produced for "Permit2" typed data verify here.
    bytes32 private constant _DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant _NAME_HASH = keccak256("Permit2");

    bytes32 private constant _TOKEN_PERMISSIONS_TYPEHASH =
        keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant _PERMIT_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)"
        "TokenPermissions(address token,uint256 amount)"
    );
    // The witness type is the stub followed by the caller's witnessTypeString, which must name
    // the witness member, close the parenthesis and append every referenced struct type in
    // EIP-712 order, e.g. "MyOrder witness)MyOrder(...)TokenPermissions(address token,uint256 amount)".
    string private constant _PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    // The separator is cached for the deployment chain and recomputed after a fork changes the
    // chain id, so a signature for one chain never verifies on another.
    uint256 private immutable _CACHED_CHAIN_ID;
    bytes32 private immutable _CACHED_DOMAIN_SEPARATOR;

    /// @notice owner => word position => bitmap of used nonces (nonce = wordPos << 8 | bitPos).
    /// Unordered nonces let a maker have many live orders and cancel any one of them.
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error InvalidSignature();
    error InvalidSigner();
    error InvalidSignatureLength();
    error InvalidContractSignature();

    constructor() {
        _CACHED_CHAIN_ID = block.chainid;
        _CACHED_DOMAIN_SEPARATOR = _buildDomainSeparator();
    }

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == _CACHED_CHAIN_ID ? _CACHED_DOMAIN_SEPARATOR : _buildDomainSeparator();
    }

    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(
                _PERMIT_TRANSFER_FROM_TYPEHASH,
                _hashTokenPermissions(permit.permitted),
                msg.sender, // the spender is whoever calls: a permit cannot be used by anyone else
                permit.nonce,
                permit.deadline
            )
        );
        _permitTransferFrom(permit, transferDetails, owner, structHash, signature);
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(_PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB, witnessTypeString));
        bytes32 structHash = keccak256(
            abi.encode(
                typeHash, _hashTokenPermissions(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness
            )
        );
        _permitTransferFrom(permit, transferDetails, owner, structHash, signature);
    }

    /// @notice Marks nonces as used without spending them: an owner cancels signed permits by
    /// setting their bits. `mask` bits are OR-ed into word `wordPos` of the caller's bitmap.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    function _permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 structHash,
        bytes calldata signature
    ) private {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        uint256 requestedAmount = transferDetails.requestedAmount;
        if (requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useUnorderedNonce(owner, permit.nonce);
        _verify(signature, keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash)), owner);
        permit.permitted.token.safeTransferFrom(owner, transferDetails.to, requestedAmount);
    }

    function _useUnorderedNonce(address owner, uint256 nonce) private {
        uint256 wordPos = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = nonceBitmap[owner][wordPos] ^= bit;
        // If the bit was already set, the XOR cleared it: the nonce was used or invalidated.
        if (flipped & bit == 0) revert InvalidNonce();
    }

    /// @dev EOAs (no code): 65-byte (r,s,v) or 64-byte EIP-2098 (r,vs) ECDSA signatures.
    /// Contracts: ERC-1271, the contract alone decides (this is also how smart wallets sign).
    function _verify(bytes calldata signature, bytes32 digest, address claimedSigner) private view {
        if (claimedSigner.code.length == 0) {
            bytes32 r;
            bytes32 s;
            uint8 v;
            if (signature.length == 65) {
                (r, s) = abi.decode(signature, (bytes32, bytes32));
                v = uint8(signature[64]);
            } else if (signature.length == 64) {
                bytes32 vs;
                (r, vs) = abi.decode(signature, (bytes32, bytes32));
                s = vs & bytes32(uint256(type(uint256).max >> 1));
                v = uint8(uint256(vs >> 255)) + 27;
            } else {
                revert InvalidSignatureLength();
            }
            address signer = ecrecover(digest, v, r, s);
            if (signer == address(0)) revert InvalidSignature();
            if (signer != claimedSigner) revert InvalidSigner();
        } else {
            bytes4 magic = IERC1271(claimedSigner).isValidSignature(digest, signature);
            if (magic != IERC1271.isValidSignature.selector) revert InvalidContractSignature();
        }
    }

    function _hashTokenPermissions(TokenPermissions calldata permitted) private pure returns (bytes32) {
        return keccak256(abi.encode(_TOKEN_PERMISSIONS_TYPEHASH, permitted.token, permitted.amount));
    }

    function _buildDomainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(_DOMAIN_TYPEHASH, _NAME_HASH, block.chainid, address(this)));
    }
}
