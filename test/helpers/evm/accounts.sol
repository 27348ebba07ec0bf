// SPDX-License-Identifier: Apache-2.0
// Minimal smart-contract accounts for the sign-in tests (compiled with solc at test time).
// Each answers ERC-1271 isValidSignature(hash, signature) for a hash its owner key signed (raw
// ECDSA over the hash, 65 bytes r||s||v), the way a one-owner contract wallet does.
pragma solidity ^0.8.20;

abstract contract OwnerSigned {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// Whether `signature` is the owner's ECDSA signature of `hash`.
    function signedByOwner(bytes32 hash, bytes calldata signature) internal view returns (bool) {
        if (signature.length != 65) return false;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner;
    }
}

/// The honest account: 0x1626ba7e when the owner signed the hash, 0xffffffff otherwise.
contract OwnerAccount is OwnerSigned {
    constructor(address owner_) OwnerSigned(owner_) {}

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        return signedByOwner(hash, signature) ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}

/// An account whose isValidSignature always reverts.
contract RevertingAccount is OwnerSigned {
    constructor(address owner_) OwnerSigned(owner_) {}

    function isValidSignature(bytes32, bytes calldata) external pure returns (bytes4) {
        revert("RevertingAccount: isValidSignature always reverts");
    }
}

/// An account that checks the owner's signature but answers the wrong magic value for a valid one.
contract WrongMagicAccount is OwnerSigned {
    constructor(address owner_) OwnerSigned(owner_) {}

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        return signedByOwner(hash, signature) ? bytes4(0x12345678) : bytes4(0xffffffff);
    }
}

/// Deploys OwnerAccounts with CREATE2: an account's address is known (and can sign in, through an
/// ERC-6492 wrapped signature) before it is deployed.
contract AccountFactory {
    event Deployed(address account);

    function deploy(address owner_, bytes32 salt) external returns (address account) {
        account = address(new OwnerAccount{salt: salt}(owner_));
        emit Deployed(account);
    }

    function addressOf(address owner_, bytes32 salt) external view returns (address) {
        bytes32 codeHash = keccak256(abi.encodePacked(type(OwnerAccount).creationCode, abi.encode(owner_)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, codeHash)))));
    }
}
