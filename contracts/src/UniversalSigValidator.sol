// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC1271} from "./Interfaces.sol";

/// @title UniversalSigValidator
/// @notice A deployless signature checker (ERC-6492): never deployed, it is run with `eth_call`
/// without a `to`, the data being this creation code followed by
/// abi.encode(address signer, bytes32 hash, bytes signature). The constructor returns one byte
/// as the "runtime code": 0x01 when the signature is valid, 0x00 otherwise. Because it runs in
/// an eth_call, deploying a counterfactual wallet to check its signature leaves no trace.
/// Order of checks: ERC-6492 wrapper (deploy if needed, then ERC-1271), else ERC-1271 if the
/// signer has code, else ecrecover. Any malformed input answers 0x00 instead of reverting, so
/// callers can tell "invalid" (0x00) apart from "could not check" (an RPC error).
contract UniversalSigValidator {
    bytes32 private constant _ERC6492_SUFFIX = 0x6492649264926492649264926492649264926492649264926492649264926492;

    constructor(address signer, bytes32 hash, bytes memory signature) {
        bool valid = _isValid(signer, hash, signature);
        assembly ("memory-safe") {
            mstore(0, valid)
            return(31, 1)
        }
    }

    function _isValid(address signer, bytes32 hash, bytes memory signature) private returns (bool) {
        uint256 length = signature.length;
        if (length >= 32 && _word(signature, length - 32) == uint256(_ERC6492_SUFFIX)) {
            (bool ok, address factory, bytes memory factoryCalldata, bytes memory innerSig) =
                _decode6492(signature, length - 32);
            if (!ok) return false;
            if (signer.code.length == 0) {
                // Counterfactual account: run its deployment first (only inside this eth_call).
                (bool deployed,) = factory.call(factoryCalldata);
                if (!deployed) return false;
            }
            return _isValid1271(signer, hash, innerSig);
        }
        if (signer.code.length != 0) return _isValid1271(signer, hash, signature);
        return _isValidEcdsa(signer, hash, signature);
    }

    function _isValid1271(address signer, bytes32 hash, bytes memory signature) private view returns (bool) {
        (bool ok, bytes memory ret) =
            signer.staticcall(abi.encodeCall(IERC1271.isValidSignature, (hash, signature)));
        // A left-aligned bytes4 in a full word; an account without code returns no data.
        return ok && ret.length >= 32 && _word(ret, 0) == uint256(bytes32(IERC1271.isValidSignature.selector));
    }

    function _isValidEcdsa(address signer, bytes32 hash, bytes memory signature) private pure returns (bool) {
        if (signature.length != 65) return false;
        bytes32 r = bytes32(_word(signature, 0));
        bytes32 s = bytes32(_word(signature, 32));
        uint8 v = uint8(signature[64]);
        address recovered = ecrecover(hash, v, r, s);
        return recovered != address(0) && recovered == signer;
    }

    /// @dev Decodes abi.encode(address factory, bytes factoryCalldata, bytes innerSig) from the
    /// first `limit` bytes of `data`, bounds-checking every offset and length by hand, because
    /// abi.decode would revert on hostile input and this contract must answer 0x00 instead.
    function _decode6492(bytes memory data, uint256 limit)
        private
        pure
        returns (bool ok, address factory, bytes memory factoryCalldata, bytes memory innerSig)
    {
        if (limit < 96) return (false, address(0), factoryCalldata, innerSig);
        uint256 factoryWord = _word(data, 0);
        if (factoryWord >> 160 != 0) return (false, address(0), factoryCalldata, innerSig);
        factory = address(uint160(factoryWord));
        bool ok1;
        bool ok2;
        (ok1, factoryCalldata) = _readBytes(data, limit, _word(data, 32));
        (ok2, innerSig) = _readBytes(data, limit, _word(data, 64));
        ok = ok1 && ok2;
    }

    /// @dev Copies the ABI `bytes` whose length word sits at `offset`, if it lies within `limit`.
    function _readBytes(bytes memory data, uint256 limit, uint256 offset)
        private
        pure
        returns (bool ok, bytes memory out)
    {
        if (offset > limit || limit - offset < 32) return (false, out);
        uint256 len = _word(data, offset);
        if (len > limit - offset - 32) return (false, out);
        out = new bytes(len);
        assembly ("memory-safe") {
            mcopy(add(out, 32), add(add(data, 64), offset), len)
        }
        ok = true;
    }

    /// @dev The 32-byte word at byte `offset` of `data`'s contents; callers keep it in bounds.
    function _word(bytes memory data, uint256 offset) private pure returns (uint256 w) {
        assembly ("memory-safe") {
            w := mload(add(add(data, 32), offset))
        }
    }
}
