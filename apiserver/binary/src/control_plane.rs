//! The control plane the binary runs around its apiserver, in-process and through the server's own
//! request handler (so that every request passes authentication, authorization and admission like any
//! client's): kube-controller-manager's controllers (`--controllers`), kube-scheduler (`--scheduler`), and
//! simulated nodes (`--nodes`, kwok-like kubelets). The controller manager and the scheduler are each
//! leader-elected over their own Lease in `kube-system` when `--leader-elect` is on, as the real
//! components are.

use std::sync::Arc;

use apiserver::endpoints::ApiServer;
use controllers::client::{Client, Transport};
use controllers::manager::{self, Config, Role};
use controllers::runtime::leader::ElectorConfig;
use controllers::runtime::selection::Selection;

use crate::args::Args;

/// What the flags say to run.
#[derive(Clone, Copy)]
pub struct Components {
    pub leader_elect: bool,
    pub scheduler: bool,
    pub nodes: usize,
}

impl Components {
    pub fn of(args: &Args) -> Components {
        Components { leader_elect: args.leader_elect, scheduler: args.scheduler, nodes: args.nodes }
    }
}

/// The bearer tokens the components authenticate with (each drawn from the seed).
pub struct Tokens {
    pub controller_manager: String,
    pub scheduler: String,
    pub nodes: String,
}

/// The time of day in Unix microseconds, for the components' timestamps (the wall clock: `run` hands it in).
pub type Now = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Runs what the flags ask for, for as long as the future lives.
pub async fn run(
    server: Arc<ApiServer>,
    tokens: Tokens,
    selection: Selection,
    args: Components,
    seed: u64,
    root_ca: String,
    now_unix_us: Now,
) {
    let client = |token: &str, agent: &str| {
        Arc::new(Client::new(Transport::InProcess(server.clone()), Some(token.to_string()), agent))
    };
    let elected = |role: Role, seed: u64| Config {
        // The components' identity: upstream's is the host name and a random suffix.
        election: ElectorConfig::new(format!("kubesim-apiserver_{seed:016x}")),
        role,
        leader_elect: args.leader_elect,
        seed,
        root_ca: root_ca.clone(),
        now_unix_us: now_unix_us.clone(),
        observer: None,
        bugs: Default::default(),
    };
    let controller_manager = manager::run(
        client(&tokens.controller_manager, "kube-controller-manager"),
        elected(Role::ControllerManager(selection), seed),
    );
    let scheduler = async {
        if args.scheduler {
            let config = elected(Role::Scheduler, seed ^ 0x7363_6865_6475_6c65);
            manager::run(client(&tokens.scheduler, "kube-scheduler"), config).await;
        }
    };
    let nodes = async {
        if args.nodes > 0 {
            let client = client(&tokens.nodes, "kubelet");
            let fleet = controllers::nodes::Fleet {
                first: 1,
                count: args.nodes,
                template: controllers::nodes::NodeTemplate::default(),
            };
            controllers::nodes::run(nodes_context(client, seed, &root_ca, now_unix_us.clone()), fleet).await;
        }
    };
    tokio::join!(controller_manager, scheduler, nodes);
}

/// The simulated kubelets' context: their own informers and event source.
fn nodes_context(client: Arc<Client>, seed: u64, root_ca: &str, now: Now) -> controllers::kcm::Context {
    use controllers::runtime::events::Recorder;
    use controllers::runtime::informer::Informers;
    controllers::kcm::Context {
        informers: Arc::new(Informers::new(client.clone(), seed)),
        events: Recorder::new(client.clone(), "kubelet", now.clone()),
        client,
        seed: seed ^ 0x6b75_6265_6c65_7400,
        root_ca: root_ca.to_string(),
        now_unix_us: now,
        bugs: Default::default(),
    }
}
