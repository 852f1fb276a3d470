//! Who the apiservers know: a scenario's `[[user]]`s, each trusted by every apiserver through a static
//! bearer token (kube-apiserver's `--token-auth-file`) that the harness derives from the user's name, and
//! the harness's own identity, a member of `system:masters`, with which it writes the objects a scenario's
//! cluster starts with (the webhooks' configurations) whatever the authorization mode.
//!
//! Tokens are a hash of the name, so the same scenario gives the same tokens on every run and machine, and
//! no two users share one.

use apiserver::endpoints::authn::{Authentication, TokenFile};
use apiserver::registry::user::UserInfo;

use super::seeds::fnv1a;

/// The harness's own user: it creates the webhooks' configurations before any client starts.
pub const HARNESS_USER: &str = "kubesim:harness";

/// The controller managers' user (`cluster::controller_manager`), in `system:masters`: upstream's
/// per-controller service accounts and their `system:controller:*` roles are not bootstrapped.
pub const CONTROLLER_MANAGER_USER: &str = "system:kube-controller-manager";

/// The schedulers' user, beside the controller managers, in `system:masters` too.
pub const SCHEDULER_USER: &str = "system:kube-scheduler";

/// The simulated kubelets' user (`cluster::kubelet`), one for every node, in `system:nodes` and
/// `system:masters`: the Node authorizer and NodeRestriction are not modelled.
pub const NODE_USER: &str = "system:node:kubesim";

/// The group whose members every authorizer lets do anything (upstream's `system:masters`).
pub const MASTERS: &str = "system:masters";

/// One `[[user]]` of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserSpec {
    pub name: String,
    /// The groups the user is in, besides `system:authenticated`, which authentication adds.
    pub groups: Vec<String>,
}

/// The bearer token every apiserver trusts for `user`.
pub fn token_of(user: &str) -> String {
    format!("kubesim-{:016x}", fnv1a(format!("kubesim user/{user}").as_bytes()))
}

/// The authenticators of every apiserver: anonymous requests allowed (kube-apiserver's default), and one
/// static token per user, with the harness's own when `harness` is set and the control plane's (controller
/// managers, schedulers, kubelets) when `managers` is. No users, no harness and no managers leave the apiservers exactly as they were before
/// scenarios had identities.
pub fn authentication(users: &[UserSpec], harness: bool, managers: bool) -> Authentication {
    let mut tokens = TokenFile::default();
    let harness_user = harness.then(|| UserSpec { name: HARNESS_USER.into(), groups: vec![MASTERS.into()] });
    let control_plane: Vec<UserSpec> = if managers {
        vec![
            UserSpec { name: CONTROLLER_MANAGER_USER.into(), groups: vec![MASTERS.into()] },
            UserSpec { name: SCHEDULER_USER.into(), groups: vec![MASTERS.into()] },
            UserSpec { name: NODE_USER.into(), groups: vec!["system:nodes".into(), MASTERS.into()] },
        ]
    } else {
        Vec::new()
    };
    for user in users.iter().chain(harness_user.as_ref()).chain(&control_plane) {
        let info = UserInfo {
            username: user.name.clone(),
            uid: format!("uid-{}", user.name),
            groups: user.groups.clone(),
            extra: Default::default(),
        };
        tokens.extend(TokenFile::single(&token_of(&user.name), info));
    }
    Authentication { tokens, ..Authentication::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_stable_and_distinct_per_user() {
        assert_eq!(token_of("alice"), token_of("alice"));
        assert_ne!(token_of("alice"), token_of("bob"));
        assert!(token_of("alice").starts_with("kubesim-"));
    }

    #[test]
    fn every_user_and_the_harness_are_trusted_with_their_groups() {
        let users = [UserSpec { name: "admin".into(), groups: vec![MASTERS.into()] }];
        let authn = authentication(&users, true, false);
        let admin = authn.tokens.user(&token_of("admin")).expect("admin is trusted");
        assert_eq!((admin.username.as_str(), admin.groups.clone()), ("admin", vec![MASTERS.to_string()]));
        let harness = authn.tokens.user(&token_of(HARNESS_USER)).expect("the harness is trusted");
        assert_eq!(harness.groups, vec![MASTERS.to_string()]);
        assert!(authn.anonymous);
        assert!(authentication(&users, false, false).tokens.user(&token_of(HARNESS_USER)).is_none());
        assert_eq!(authentication(&[], false, false), Authentication::default());
        let managers = authentication(&[], false, true);
        assert_eq!(managers.tokens.user(&token_of(CONTROLLER_MANAGER_USER)).unwrap().groups, vec![MASTERS.to_string()]);
    }
}
