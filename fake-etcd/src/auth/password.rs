//! Password hashes: bcrypt, as etcd stores them, with the salt handed in (the shell draws it from the
//! member's seeded generator, so a simulation hashes the same way every run).

/// etcd 3.4's `--bcrypt-cost` default (`bcrypt.DefaultCost`).
pub const DEFAULT_BCRYPT_COST: u32 = 10;

/// The lowest cost bcrypt accepts; tests use it to keep logins fast.
pub(crate) const MIN_BCRYPT_COST: u32 = 4;

/// The bcrypt hash of `password` with `salt` at `cost` (clamped to bcrypt's 4..=31, as etcd refuses other
/// costs at start-up). Passwords longer than 72 bytes are cut there, as bcrypt always has.
pub(crate) fn hash(password: &str, cost: u32, salt: [u8; 16]) -> String {
    let cost = cost.clamp(MIN_BCRYPT_COST, 31);
    bcrypt::hash_with_salt(password, cost, salt).expect("cost is in bcrypt's range").to_string()
}

/// Whether `password` matches `hash`. A hash that does not parse matches nothing.
pub(crate) fn verify(password: &str, hash: &str) -> bool {
    bcrypt::verify(password, hash).unwrap_or(false)
}
