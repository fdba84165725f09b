// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @dev The ERC-20 surface our contracts call. The reactor and router never rely on the bool
/// return value directly: they go through `SafeTransfer` so USDT-style tokens work too.
interface IERC20 {
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    function totalSupply() external view returns (uint256);
    function balanceOf(address account) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @dev ERC-1271: a contract account says whether `signature` is valid for `hash`.
interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4);
}

/// @dev The Permit2 SignatureTransfer interface (same struct layouts and function shapes as
/// Uniswap's Permit2, so off-chain tooling built for Permit2 signs for this contract unchanged).
interface ISignatureTransfer {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    function DOMAIN_SEPARATOR() external view returns (bytes32);

    function nonceBitmap(address owner, uint256 wordPos) external view returns (uint256);

    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external;

    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external;

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

/// @dev A maker order. It is the Permit2 witness: the maker's signature over the permit covers
/// every field, so nothing here can be changed by whoever submits the order.
/// input* = what the maker gives (the permitted token), output* = what the maker receives,
/// feeAmount = paid by the taker in outputToken to the fee recipient on top of outputAmount,
/// taker = the only address allowed to fill (address(0) = anyone).
struct RfqOrder {
    address reactor;
    address maker;
    address taker;
    address inputToken;
    uint256 inputAmount;
    address outputToken;
    uint256 outputAmount;
    uint256 feeAmount;
    uint256 nonce;
    uint256 deadline;
}

/// @dev `order` is abi.encode(RfqOrder); `sig` is the maker's Permit2 witness signature.
struct SignedOrder {
    bytes order;
    bytes sig;
}

interface IRfqReactor {
    function execute(SignedOrder calldata order) external;
    function executeBatch(SignedOrder[] calldata orders) external;
}
