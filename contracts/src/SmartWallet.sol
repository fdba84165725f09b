// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC1271} from "./Interfaces.sol";

/// @title SmartWallet
/// @notice A minimal contract account owned by one EOA, for exercising ERC-1271 (deployed) and
/// ERC-6492 (counterfactual, see SmartWalletFactory) signature paths.
/// @dev isValidSignature checks an ECDSA signature by the owner over the raw hash, with no
/// account-specific wrapping. That is enough for a test wallet; a production wallet would bind
/// the hash to its own address so one owner's signature cannot be replayed across its wallets.
contract SmartWallet is IERC1271 {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    bytes4 private constant _MAGIC_VALUE = 0x1626ba7e; // IERC1271.isValidSignature.selector
    bytes4 private constant _INVALID = 0xffffffff;

    address public immutable owner;

    error NotOwner();

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    constructor(address owner_) {
        owner = owner_;
    }

    receive() external payable {}

    /// @notice Never reverts: a malformed or wrong signature answers 0xffffffff.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return _INVALID;
        (bytes32 r, bytes32 s) = abi.decode(signature, (bytes32, bytes32));
        address signer = ecrecover(hash, uint8(signature[64]), r, s);
        // ecrecover yields address(0) for garbage; never let that match an unset owner.
        return signer != address(0) && signer == owner ? _MAGIC_VALUE : _INVALID;
    }

    /// @notice Lets the owner act as the account (approve tokens, call the reactor, cancel
    /// nonces...). Reverts bubble up unchanged.
    function execute(address to, uint256 value, bytes calldata data) external onlyOwner returns (bytes memory) {
        return _call(to, value, data);
    }

    function executeBatch(Call[] calldata calls) external onlyOwner returns (bytes[] memory results) {
        results = new bytes[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            results[i] = _call(calls[i].to, calls[i].value, calls[i].data);
        }
    }

    function _call(address to, uint256 value, bytes calldata data) private returns (bytes memory ret) {
        bool ok;
        (ok, ret) = to.call{value: value}(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
    }
}
