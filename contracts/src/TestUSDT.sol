// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title TestUSDT
/// @notice Reproduces the two mainnet USDT quirks that break naive integrations:
///  1. `approve` reverts when changing a nonzero allowance to another nonzero value
///     (callers must reset to 0 first);
///  2. `approve`, `transfer` and `transferFrom` return NO value, so a caller that decodes a
///     bool from the return data reverts.
/// Failures revert with empty data, like mainnet USDT's bare `require`s.
contract TestUSDT {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    address public immutable owner;
    uint256 public totalSupply;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        owner = msg.sender;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner);
        totalSupply += amount;
        unchecked {
            balanceOf[to] += amount; // bounded by totalSupply
        }
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external {
        _transfer(msg.sender, to, amount);
    }

    function approve(address spender, uint256 amount) external {
        // The mainnet USDT race-condition "protection": nonzero -> nonzero is refused.
        require(amount == 0 || allowance[msg.sender][spender] == 0);
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
    }

    function transferFrom(address from, address to, uint256 amount) external {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= amount);
        // Mainnet USDT also leaves a max allowance untouched.
        if (allowed != type(uint256).max) {
            unchecked {
                allowance[from][msg.sender] = allowed - amount;
            }
        }
        _transfer(from, to, amount);
    }

    function _transfer(address from, address to, uint256 amount) private {
        require(to != address(0));
        uint256 balance = balanceOf[from];
        require(balance >= amount);
        unchecked {
            balanceOf[from] = balance - amount;
            balanceOf[to] += amount;
        }
        emit Transfer(from, to, amount);
    }
}
