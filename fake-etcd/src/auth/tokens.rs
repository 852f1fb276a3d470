//! etcd's simple tokens: `<16 random letters>.<raft index of the login>`, remembered in memory only (a
//! restarted member knows none), each forgotten `SIMPLE_TOKEN_TTL_S` after its last use (etcd's
//! `simpleTokenTTLKeeper`, `--auth-token-ttl`), all of a user's when the user is deleted or changes password,
//! and all of them when auth is disabled.

use std::collections::BTreeMap;

use rand_chacha::rand_core::RngCore;

use crate::types::Millis;

/// etcd's `--auth-token-ttl` default: 300 seconds.
pub const SIMPLE_TOKEN_TTL_S: i64 = 300;

/// The random part of a simple token: 16 ASCII letters, as etcd's `genTokenPrefix` draws them.
pub(crate) fn token_prefix(rng: &mut impl RngCore) -> String {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    (0..16).map(|_| LETTERS[(rng.next_u32() % LETTERS.len() as u32) as usize] as char).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Held {
    user: String,
    deadline: Millis,
}

/// The tokens a member handed out or learnt from the log, with their deadlines on the member's clock.
#[derive(Debug, Default)]
pub(crate) struct SimpleTokens {
    tokens: BTreeMap<String, Held>,
    ttl_s: i64,
}

impl SimpleTokens {
    pub(crate) fn new(ttl_s: i64) -> SimpleTokens {
        SimpleTokens { tokens: BTreeMap::new(), ttl_s }
    }

    pub(crate) fn assign(&mut self, token: String, user: &str, now: Millis) {
        self.tokens.insert(token, Held { user: user.to_string(), deadline: now.plus_s(self.ttl_s) });
    }

    /// The user a live token belongs to; using it restarts its TTL. An expired token is forgotten.
    pub(crate) fn user_of(&mut self, token: &str, now: Millis) -> Option<String> {
        let held = self.tokens.get_mut(token)?;
        if held.deadline <= now {
            self.tokens.remove(token);
            return None;
        }
        held.deadline = now.plus_s(self.ttl_s);
        Some(held.user.clone())
    }

    /// Forgets every token of `user`.
    pub(crate) fn invalidate_user(&mut self, user: &str) {
        self.tokens.retain(|_, h| h.user != user);
    }

    pub(crate) fn clear(&mut self) {
        self.tokens.clear();
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.tokens.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}
