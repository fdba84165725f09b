// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {SmartWallet} from "./SmartWallet.sol";

/// @title SmartWalletFactory
/// @notice Deploys SmartWallets with CREATE2 so a wallet's address is known (and can sign via
/// ERC-6492) before it exists. The address depends on this factory, the owner and the salt.
contract SmartWalletFactory {
    event AccountCreated(address indexed account, address indexed owner, uint256 salt);

    /// @notice Deploys the wallet, or returns it if it is already deployed. Idempotency matters
    /// for ERC-6492: a verifier may replay the factory call for a wallet that exists by now.
    function createAccount(address owner, uint256 salt) external returns (address account) {
        account = getAddress(owner, salt);
        if (account.code.length != 0) return account;
        new SmartWallet{salt: bytes32(salt)}(owner);
        emit AccountCreated(account, owner, salt);
    }

    /// @notice The counterfactual address of the wallet for (owner, salt).
    function getAddress(address owner, uint256 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(SmartWallet).creationCode, abi.encode(owner)));
        bytes32 digest = keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), initCodeHash));
        return address(uint160(uint256(digest)));
    }
}
