// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC20, IRfqReactor, SignedOrder} from "./Interfaces.sol";
import {SafeTransfer} from "./SafeTransfer.sol";

/// @title SampleRouter
/// @notice A minimal aggregator router: it fills RFQ quotes (on which it is the bound taker)
/// through the reactor inside its user's own transaction, then hands the proceeds to the user.
/// It keeps no funds and no allowances between transactions.
contract SampleRouter {
    using SafeTransfer for address;

    bool private transient _locked;

    event Swap(
        address indexed user,
        address indexed reactor,
        address tokenIn,
        uint256 amountIn,
        address tokenOut,
        uint256 amountOut
    );

    error InsufficientOutput(uint256 amountOut, uint256 minOut);
    error SameToken();
    error Reentrancy();

    modifier nonReentrant() {
        if (_locked) revert Reentrancy();
        _locked = true;
        _;
        _locked = false;
    }

    /// @notice Pulls `amountIn` of `tokenIn` from the caller, fills `orders` on `reactor` as
    /// taker, sends every `tokenOut` received to the caller (at least `minOut`) and refunds the
    /// `tokenIn` the orders did not consume. The caller must have approved this router.
    function swap(
        address reactor,
        SignedOrder[] calldata orders,
        address tokenIn,
        uint256 amountIn,
        address tokenOut,
        uint256 minOut
    ) external nonReentrant returns (uint256 amountOut) {
        // With one token on both sides the balance deltas below would be meaningless.
        if (tokenIn == tokenOut) revert SameToken();
        // Work on balance deltas so tokens someone sent to the router by mistake are neither
        // paid out to this user nor counted towards minOut.
        uint256 inBefore = IERC20(tokenIn).balanceOf(address(this));
        uint256 outBefore = IERC20(tokenOut).balanceOf(address(this));

        tokenIn.safeTransferFrom(msg.sender, address(this), amountIn);
        // Reset first: USDT-style tokens refuse a nonzero -> nonzero approve.
        tokenIn.safeApprove(reactor, 0);
        tokenIn.safeApprove(reactor, amountIn);
        IRfqReactor(reactor).executeBatch(orders);
        // Leave no standing allowance to the reactor behind.
        tokenIn.safeApprove(reactor, 0);

        amountOut = IERC20(tokenOut).balanceOf(address(this)) - outBefore;
        if (amountOut < minOut) revert InsufficientOutput(amountOut, minOut);
        if (amountOut != 0) tokenOut.safeTransfer(msg.sender, amountOut);

        uint256 leftover = IERC20(tokenIn).balanceOf(address(this)) - inBefore;
        if (leftover != 0) tokenIn.safeTransfer(msg.sender, leftover);

        emit Swap(msg.sender, reactor, tokenIn, amountIn - leftover, tokenOut, amountOut);
    }
}
