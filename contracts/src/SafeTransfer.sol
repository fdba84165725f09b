// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC20} from "./Interfaces.sol";

/// @dev Token calls that accept both standard ERC-20s (return true) and USDT-style tokens
/// (return nothing). A call counts as successful when it did not revert and either returned
/// a word equal to 1 or returned nothing from an address that has code (a call to an address
/// without code also "succeeds" with no data, which must not pass as a transfer).
library SafeTransfer {
    /// @dev The token returned false, returned nothing from an empty account, or reverted
    /// without a reason. A revert with a reason is bubbled up unchanged instead.
    error TokenCallFailed(address token);

    function safeTransfer(address token, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.transfer, (to, amount)));
    }

    function safeTransferFrom(address token, address from, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.transferFrom, (from, to, amount)));
    }

    function safeApprove(address token, address spender, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.approve, (spender, amount)));
    }

    function _call(address token, bytes memory data) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok) {
            if (ret.length > 0) {
                // Bubble the token's own error so callers see why the transfer failed.
                assembly ("memory-safe") {
                    revert(add(ret, 32), mload(ret))
                }
            }
            revert TokenCallFailed(token);
        }
        if (ret.length == 0) {
            if (token.code.length == 0) revert TokenCallFailed(token);
        } else if (ret.length < 32 || abi.decode(ret, (uint256)) != 1) {
            revert TokenCallFailed(token);
        }
    }
}
