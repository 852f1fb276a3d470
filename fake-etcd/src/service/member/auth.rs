//! The member's side of auth: the simple tokens it knows (in memory, as etcd's are: a restarted member knows
//! none), who a request's token names, password hashing and checking around the slow bcrypt work, the
//! seeded generator that draws salts and token prefixes, and the logins themselves (a password check on
//! this member, then an `Authenticate` entry through Raft whose index completes the token on every member).

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Member, State};
use crate::apply::{Command, CommandResponse};
use crate::auth::{self, password, AuthInfo, AuthRequest, AuthResponse, SimpleTokens, ROOT};
use crate::error::EtcdError;
use crate::types::{LogIndex, MemberId, Millis};

/// What the member keeps for auth outside the state machine.
pub(super) struct MemberAuth {
    tokens: SimpleTokens,
    /// Draws password salts and token prefixes; seeded from the member id and its start time (simulated
    /// time under madsim), so that a simulation repeats and a restarted member draws new values.
    rng: ChaCha8Rng,
    /// The last log index on disk when this life began: logins replayed from the log at start-up hand out
    /// no tokens, because the tokens of a past life died with it.
    replayed_through: LogIndex,
}

/// What applying a command means for the tokens, decided before the command is consumed by the apply.
pub(super) enum TokenEffect {
    None,
    Login { name: String, prefix: String },
    ForgetUser(String),
    ForgetAll,
}

impl TokenEffect {
    pub(super) fn of(cmd: &Command) -> TokenEffect {
        match cmd {
            Command::Auth(AuthRequest::Authenticate { name, token_prefix }) => {
                TokenEffect::Login { name: name.clone(), prefix: token_prefix.clone() }
            }
            Command::Auth(AuthRequest::UserDelete { name } | AuthRequest::UserChangePassword { name, .. }) => {
                TokenEffect::ForgetUser(name.clone())
            }
            Command::Auth(AuthRequest::Disable) => TokenEffect::ForgetAll,
            _ => TokenEffect::None,
        }
    }
}

impl MemberAuth {
    pub(super) fn new(member: MemberId, start_ms: u64, ttl_s: i64, replayed_through: LogIndex) -> MemberAuth {
        let seed = member.0 ^ start_ms.rotate_left(32) ^ 0x6175_7468; // "auth"
        MemberAuth { tokens: SimpleTokens::new(ttl_s), rng: ChaCha8Rng::seed_from_u64(seed), replayed_through }
    }

    /// Carries out `effect` of the entry at `index`, which applied with `response`: a login's token is
    /// completed with the index (and remembered, unless the entry is a replay of a past life).
    pub(super) fn applied(
        &mut self,
        effect: TokenEffect,
        index: LogIndex,
        now: Millis,
        response: &mut CommandResponse,
    ) {
        match effect {
            TokenEffect::None => {}
            TokenEffect::Login { name, prefix } => {
                let token = format!("{prefix}.{index}");
                if index > self.replayed_through {
                    self.tokens.assign(token.clone(), &name, now);
                }
                if let CommandResponse::Auth(AuthResponse::Authenticate(resp)) = response {
                    resp.token = token;
                }
            }
            TokenEffect::ForgetUser(name) => self.tokens.invalidate_user(&name),
            TokenEffect::ForgetAll => self.tokens.clear(),
        }
    }
}

impl State {
    /// Who a request with `token` comes from (etcd's `AuthInfoFromCtx`): nobody without a token; a token
    /// this member does not know (expired, from a past life, or made up) is refused, auth enabled or not.
    pub(super) fn auth_info(&mut self, token: Option<&str>, now: Millis) -> Result<AuthInfo, EtcdError> {
        let Some(token) = token else { return Ok(AuthInfo::default()) };
        let user = self.auth.tokens.user_of(token, now).ok_or(EtcdError::InvalidAuthToken)?;
        Ok(AuthInfo { user, revision: self.sm.auth.revision() })
    }
}

impl Member {
    /// Who a request carrying `token` (its `token` metadata) comes from.
    pub(crate) fn auth_info(&self, token: Option<&str>) -> Result<AuthInfo, EtcdError> {
        let now = self.now();
        self.lock().auth_info(token, now)
    }

    /// The root user at the current auth revision: what the leader's own lease revokes run as (etcd's
    /// `AuthStore.WithRoot`), so that expiry is never refused.
    pub(super) fn as_root(&self) -> AuthInfo {
        let st = self.lock();
        if st.sm.auth.is_enabled() {
            AuthInfo { user: ROOT.to_string(), revision: st.sm.auth.revision() }
        } else {
            AuthInfo::default()
        }
    }

    /// The bcrypt hash of `password` with a salt from the member's generator, made outside the lock.
    pub(crate) fn hash_password(&self, password: &str) -> String {
        let mut salt = [0u8; 16];
        self.lock().auth.rng.fill_bytes(&mut salt);
        password::hash(password, self.config().bcrypt_cost, salt)
    }

    /// A login (etcd's `EtcdServer.Authenticate`): wait for a linearizable point, check the password here
    /// (outside the lock: bcrypt is slow on purpose), then order the login through Raft; its entry's index
    /// completes the token. A login whose check raced with a change of the auth store is tried again.
    pub(crate) async fn authenticate(&self, name: &str, password: &str) -> Result<String, EtcdError> {
        self.read_barrier().await?;
        loop {
            let (hash, checked_at) = self.read(|sm| sm.auth.password_hash(name))?;
            if !password::verify(password, &hash) {
                return Err(EtcdError::AuthFailed);
            }
            let token_prefix = auth::token_prefix(&mut self.lock().auth.rng);
            let login = AuthRequest::Authenticate { name: name.to_string(), token_prefix };
            let response = self.propose(Command::Auth(login)).await?;
            if self.read(|sm| sm.auth.revision()) != checked_at {
                continue;
            }
            return match response {
                CommandResponse::Auth(AuthResponse::Authenticate(resp)) => Ok(resp.token),
                other => unreachable!("a login is answered with a token, not {other:?}"),
            };
        }
    }
}
