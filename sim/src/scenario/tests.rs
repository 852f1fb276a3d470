//! The scenario language's boundary tests: one table of bad files, each with the location and the words its
//! one error must have; and runs that prove a wrong expectation fails with a readable diff.

use super::{judge, parse, report, run};

/// A minimal valid head that cases append to.
const HEAD: &str = "# case\n[[client]]\nname = \"a\"\n";

/// (what the case is, the file, `line:col` of the error, words the message must contain).
const BAD: &[(&str, &str, &str, &str)] = &[
    ("malformed toml", "# x\n[[client]]\nname = \"a\"\n[[client.step]]\nput = { key = \"/a\" value = \"1\" }\n", "5:20", "expected `,`"),
    ("unknown table", "# x\n[clusterr]\nmembers = 1\n", "2:2", "unknown field `clusterr`"),
    ("unknown step key", "[[client.step]]\nputs = { key = \"/a\", value = \"1\" }\n", "5:1", "unknown field `puts`, expected one of"),
    ("a misspelt step key gets a suggestion", "[[client.step]]\nlease_grnat = { ttl_s = 5 }\n", "5:1", "did you mean `lease_grant`?"),
    ("a misspelt step name gets a suggestion", "[[client.step]]\nname = \"create-a\"\nput = { key = \"/a\", value = \"1\" }\n[[client.step]]\nafter = [\"create-b\"]\nsleep_ms = 1\n", "8:10", "did you mean `create-a`?"),
    ("a watch guarantee held with no watch", "[[client.step]]\nput = { key = \"/a\", value = \"1\" }\n[checks]\nhold = [\"Linearizable\", \"Reliable\"]\n", "7:25", "holds Reliable, which would judge nothing: no client watches etcd"),
    ("Linearizable held with no KV request", "[[client.step]]\nsleep_ms = 1\n[checks]\nhold = [\"Linearizable\"]\n", "7:9", "holds Linearizable, which would judge nothing"),
    ("unknown key in an op", "[[client.step]]\nput = { key = \"/a\", value = \"1\", ttl = 3 }\n", "5:34", "unknown field `ttl`"),
    ("type error", "[cluster]\nmembers = \"three\"\n", "5:11", "invalid type: string \"three\", expected usize"),
    ("missing key", "[[client.step]]\nlease_grant = { id = 7 }\n", "5:15", "missing field `ttl_s`"),
    ("put without a value", "[[client.step]]\nput = { key = \"/a\" }\n", "5:7", "`put` needs a `value` (or `ignore_value = true`"),
    ("txn put without a value", "[[client.step]]\ntxn.success = [{ put = { key = \"/a\" } }]\n", "5:16", "`put` needs a `value`"),
    ("unknown sort order", "[[client.step]]\nget = { key = \"/a\", sort_order = \"sideways\" }\n", "5:34", "unknown variant `sideways`, expected one of `none`, `ascend`, `descend`"),
    ("relation as a range filter", "[[client.step]]\nget = { key = \"/a\", prefix = true, min_mod_revision = \">= 2\" }\n", "5:55", "this value is given, not compared"),
    ("lease_leases takes no keys", "[[client.step]]\nlease_leases = { lease = \"g\" }\n", "5:18", "unknown field `lease`"),
    ("keys without keys = true", "[[client.step]]\nname = \"g\"\nlease_grant = { ttl_s = 5 }\n[[client.step]]\nlease_time_to_live = { lease = \"g\" }\nexpect = { keys = [\"/a\"] }\n", "9:19", "needs `keys = true`"),
    ("leases names a non-lease step", "[[client.step]]\nname = \"p\"\nput = { key = \"/a\", value = \"1\" }\n[[client.step]]\nlease_leases = {}\nexpect = { leases = [\"p\"] }\n", "9:22", "not a `lease_grant` step"),
    ("more responses than the branch has", "[[client.step]]\ntxn.success = [{ put = { key = \"/a\", value = \"1\" } }]\nexpect = { succeeded = true, responses = [{}, {}] }\n", "6:42", "lists 2 responses; expected one per operation of the branch that runs (success: 1)"),
    ("fewer responses than either branch", "[[client.step]]\ntxn.success = [{ put = { key = \"/a\", value = \"1\" } }, { get = { key = \"/a\" } }]\ntxn.failure = [{ get = { key = \"/a\" } }, { get = { key = \"/b\" } }]\nexpect = { responses = [{}] }\n", "7:24", "lists 1 response; expected one per operation of the branch that runs (success: 2, failure: 2)"),
    ("a response no branch can give", "[[client.step]]\ntxn.success = [{ put = { key = \"/a\", value = \"1\" } }]\ntxn.failure = [{ get = { key = \"/a\" } }]\nexpect = { responses = [{ prev_value = \"0\" }] }\n", "7:25", "response 1 can never match: success operation 1: `prev_value` needs `prev_kv = true` on the `put`; failure operation 1: `prev_value` does not apply to a `get`"),
    ("a txn op with two operations", "[[client.step]]\ntxn.success = [{ get = { key = \"/a\" }, txn = {} }]\n", "5:16", "exactly one of `get`, `put`, `delete`, `txn`"),
    ("no operation", "[[client.step]]\nname = \"s\"\n", "4:1", "no operation; expected exactly one of: get, put"),
    ("two operations", "[[client.step]]\nget = { key = \"/a\" }\nsleep_ms = 5\n", "4:1", "2 operations (get, sleep_ms)"),
    ("members out of range", "[cluster]\nmembers = 0\n", "5:11", "`members` is 0; expected 1 to 9"),
    ("unknown bug switch", "[cluster]\nbugs = [\"skip-sync\", \"restore-lowers-watcher\"]\n", "5:22", "unknown bug \"restore-lowers-watcher\"; expected one of"),
    ("zoo bug without its race", "[scenario]\nbug = \"skip-sync\"\n", "5:7", "expected `race = \"...\"` beside `bug`"),
    ("zoo race without its bug", "[scenario]\nrace = \"lost writes\"\n", "5:8", "`race` belongs to a bug zoo entry"),
    ("unknown zoo bug", "[scenario]\nbug = \"skip-synk\"\nrace = \"lost writes\"\n", "5:7", "unknown bug \"skip-synk\"; expected one of"),
    ("apiservers out of range", "[cluster]\napiservers = 10\n", "5:14", "`apiservers` is 10; expected 0 to 9"),
    ("zero snapshot_count", "[cluster]\nsnapshot_count = 0\n", "5:18", "`snapshot_count` is 0; expected at least 1"),
    ("zero seeds", "[scenario]\nseeds = 0\n", "5:9", "`seeds` is 0"),
    ("after a missing step", "[[client.step]]\nafter = [\"nope\"]\nsleep_ms = 1\n", "5:10", "names step \"nope\", which no client has"),
    ("rev_of a missing step", "[[client.step]]\nget = { key = \"/a\" }\nexpect = { revision = \"rev_of(nope)\" }\n", "6:23", "`rev_of` names step \"nope\""),
    ("rev_of a step without a revision", "[[client.step]]\nname = \"nap\"\nsleep_ms = 1\n[[client.step]]\nget = { key = \"/a\", revision = \"rev_of(nap)\" }\n", "8:32", "has no response revision"),
    ("bad expression", "[[client.step]]\nget = { key = \"/a\" }\nexpect = { revision = \">= two\" }\n", "6:23", "expected `[== != >= <= > <] (integer | rev_of(step) | rv_of(step))"),
    ("relation where a value is given", "[[client.step]]\nname = \"w\"\nwatch = { key = \"/a\", start_revision = \">= 3\" }\n", "6:40", "this value is given, not compared"),
    ("lease names a non-lease step", "[[client.step]]\nname = \"p\"\nput = { key = \"/a\", value = \"1\" }\n[[client.step]]\nput = { key = \"/b\", value = \"1\", lease = \"p\" }\n", "8:42", "not a `lease_grant` step"),
    ("wait on a non-watch step", "[[client.step]]\nname = \"p\"\nput = { key = \"/a\", value = \"1\" }\n[[client.step]]\nwait = { watch = \"p\", events = 1 }\n", "8:18", "not a `watch` step"),
    ("watch without a name", "[[client.step]]\nwatch = { key = \"/a\" }\n", "5:9", "a `watch` step needs a `name`"),
    ("event on a key the watch does not cover", "[[client.step]]\nname = \"w\"\nwatch = { key = \"/a\" }\nexpect.events = [{ type = \"put\", key = \"/b\" }]\n", "7:40", "the watch does not cover key \"/b\""),
    ("event the watch filters out", "[[client.step]]\nname = \"w\"\nwatch = { key = \"/a\", no_delete = true }\nexpect.events = [{ type = \"delete\", key = \"/a\" }]\n", "7:18", "filters out Delete events"),
    ("kvs outside the get's range", "[[client.step]]\nget = { key = \"/a\", prefix = true }\nexpect.kvs = [{ key = \"/b\" }]\n", "6:14", "lists key \"/b\", which the get does not cover"),
    ("expectation the op cannot meet", "[[client.step]]\nput = { key = \"/a\", value = \"1\" }\nexpect = { kvs = [] }\n", "6:18", "`expect.kvs` does not apply to a `put` step"),
    ("prev_value without prev_kv", "[[client.step]]\nput = { key = \"/a\", value = \"1\" }\nexpect = { prev_value = \"0\" }\n", "6:25", "needs `prev_kv = true`"),
    ("unknown grpc code", "[[client.step]]\nget = { key = \"/a\" }\nexpect = { error = { code = \"Nope\" } }\n", "6:29", "no gRPC code is named \"Nope\""),
    ("unknown outcome", "[[client.step]]\nget = { key = \"/a\" }\nexpect = { outcome = \"fine\" }\n", "6:22", "unknown variant `fine`"),
    ("duplicate step names", "[[client.step]]\nname = \"s\"\nsleep_ms = 1\n[[client.step]]\nname = \"s\"\nsleep_ms = 1\n", "8:8", "a step named \"s\" already exists"),
    ("duplicate client", "[[client]]\nname = \"a\"\n", "5:8", "already taken"),
    ("reserved client name", "[[client]]\nname = \"etcd-1\"\n", "5:8", "already taken"),
    ("client on a missing member", "member = \"etcd-2\"\n", "4:10", "no member is named \"etcd-2\""),
    ("steps that wait for each other", "[[client.step]]\nname = \"x\"\nafter = [\"y\"]\nsleep_ms = 1\n[[client]]\nname = \"b\"\n[[client.step]]\nname = \"y\"\nafter = [\"x\"]\nsleep_ms = 1\n", "4:1", "can never start"),
    ("fault on a missing node", "[[fault]]\nat_ms = 5\nkill = \"etcd-7\"\n", "4:1", "names node \"etcd-7\""),
    ("a role where a node is undone", "[cluster]\nmembers = 3\n[[fault]]\nat_ms = 5\nrestart = \"leader\"\n", "6:1", "names the role `leader`, which only kill, pause, clog, isolate and partitions take"),
    ("a follower of one member", "[[fault]]\nat_ms = 5\nkill = \"follower\"\n", "4:1", "the cluster has one member"),
    ("for_ms on an undo", "[[fault]]\nat_ms = 5\nheal = true\nfor_ms = 100\n", "4:1", "`heal` is itself an undo"),
    ("a misspelt role", "[[fault]]\nat_ms = 5\npause = \"leadr\"\n", "4:1", "did you mean `leader`?"),
    ("a relation of one step", "[[client.step]]\nname = \"p\"\nput = { key = \"/a\", value = \"1\" }\n[[relation]]\nexactly_one_succeeded = [\"p\"]\n", "8:25", "names two steps or more"),
    ("a relation half written", "[[client.step]]\nname = \"p\"\nput = { key = \"/a\", value = \"1\" }\n[[relation]]\nif_succeeded = \"p\"\n", "8:16", "goes with `then_seen_by`"),
    ("a relation seen by a sleep", "[[client.step]]\nname = \"p\"\nput = { key = \"/a\", value = \"1\" }\n[[client.step]]\nname = \"z\"\nsleep_ms = 1\n[[relation]]\nif_succeeded = \"p\"\nthen_seen_by = \"z\"\n", "12:16", "has no revision to compare"),
    ("a for_each of two variables", "[[client.step]]\nfor_each = { i = \"1..=2\", j = \"1..=2\" }\nsleep_ms = 1\n", "5:12", "exactly one variable"),
    ("a bad for_each range", "[[client.step]]\nfor_each = { i = \"3..1\" }\nsleep_ms = 1\n", "5:18", "expected `a..b` or `a..=b`"),
    ("a mistake in a for_each copy points at the template", "[[client.step]]\nfor_each = { i = \"1..=3\" }\nput = { key = \"/a/{i}\", valu = \"{i}\" }\n", "6:25", "unknown field `valu`"),
    ("fault with two actions", "[[fault]]\nat_ms = 5\nkill = \"etcd-1\"\nheal = true\n", "4:1", "2 actions"),
    ("fault with no time", "[[fault]]\nkill = \"etcd-1\"\n", "4:1", "exactly one of `at_ms`"),
    ("fault after a missing step", "[[fault]]\nafter = \"nope\"\nheal = true\n", "5:9", "names step \"nope\""),
    ("unknown failpoint", "[[failpoint]]\nnode = \"etcd-1\"\npoint = \"before-lunch\"\naction = \"drop\"\n", "4:1", "no failpoint is named \"before-lunch\""),
    ("failpoint on a client", "[[failpoint]]\nnode = \"a\"\npoint = \"before-compact\"\naction = \"drop\"\n", "4:1", "failpoints live in members"),
    ("delay without delay_ms", "[[failpoint]]\nnode = \"etcd-1\"\npoint = \"before-compact\"\naction = \"delay\"\n", "4:1", "needs `delay_ms`"),
    ("unknown failpoint action", "[[failpoint]]\nnode = \"etcd-1\"\npoint = \"before-compact\"\naction = \"explode\"\n", "7:10", "unknown variant `explode`"),
    ("unknown workload kind", "[[workload]]\nname = \"t\"\nkind = \"chaos\"\nclients = 1\nops = 5\n", "6:8", "no workload is named \"chaos\""),
    ("unknown nemesis pattern", "[nemesis]\npatterns = [\"kill\", \"meteor\"]\n", "5:21", "no nemesis pattern is named \"meteor\""),
    ("nemesis quiet range backwards", "[nemesis]\nquiet_ms = [500, 100]\n", "5:12", "min below max"),
    ("nemesis after a missing step", "[nemesis]\nafter = \"setup\"\n", "5:9", "names step \"setup\""),
    ("unknown guarantee", "[checks]\nhold = [\"Fast\"]\n", "5:9", "unknown variant `Fast`"),
    ("a guarantee both held and failed", "[checks]\nhold = [\"Reliable\"]\nfail = [\"Reliable\"]\n", "6:9", "both in `hold` and in `fail`"),
];

/// A head with two apiservers and a Kubernetes client on the first, for `KUBE_BAD`.
const KUBE_HEAD: &str = "# case\n[cluster]\napiservers = 2\n[[client]]\nname = \"k\"\napiserver = \"apiserver-1\"\n";

/// Bad Kubernetes parts of a file, after `KUBE_HEAD` (or `HEAD` where a case starts with `# etcd`).
const KUBE_BAD: &[(&str, &str, &str, &str)] = &[
    ("kube step without apiservers", "# etcd\n[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\" }\n", "3:8", "has no apiservers"),
    ("client on a missing apiserver", "[[client]]\nname = \"b\"\napiserver = \"apiserver-3\"\n", "9:13", "no apiserver is named \"apiserver-3\""),
    ("client with a member and an apiserver", "[[client]]\nname = \"b\"\nmember = \"etcd-1\"\napiserver = \"apiserver-1\"\n", "9:10", "a member or to apiservers, not both"),
    ("routing with one apiserver named", "[[client]]\nname = \"b\"\napiserver = \"apiserver-1\"\nrouting = \"sticky\"\n", "9:13", "`routing` picks among all"),
    ("unknown routing", "[[client]]\nname = \"b\"\nrouting = \"random\"\n", "9:11", "expected one of `round-robin`, `sticky`, `failover`"),
    ("kube step on an etcd client", "[[client]]\nname = \"b\"\nmember = \"etcd-1\"\n[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\" }\n", "10:1", "a `kube` step needs a Kubernetes client"),
    ("etcd step on a kube client", "[[client.step]]\nget = { key = \"/a\" }\n", "7:1", "sends `kube` steps, not `get`"),
    ("unknown verb", "[[client.step]]\nkube = { verb = \"apply\", resource = \"configmaps\" }\n", "8:17", "unknown variant `apply`"),
    ("unknown resource", "[[client.step]]\nkube = { verb = \"list\", resource = \"configmapz\" }\n", "8:36", "no resource is called \"configmapz\""),
    ("a parameter the verb does not take", "[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\", limit = 5 }\n", "8:8", "`limit` is not a parameter of get"),
    ("force on a merge patch", "[[client.step]]\nkube = { verb = \"patch\", resource = \"configmaps\", name = \"x\", patch = { data = { a = \"1\" } }, force = true }\n", "8:103", "`force` is for server-side apply only"),
    ("force on an update", "[[client.step]]\nkube = { verb = \"update\", resource = \"configmaps\", name = \"x\", object = { data = { a = \"1\" } }, force = true }\n", "8:8", "`force` is not a parameter of update"),
    ("an unknown patch type", "[[client.step]]\nkube = { verb = \"patch\", resource = \"configmaps\", name = \"x\", patch = { }, patch_type = \"server-side\" }\n", "8:89", "unknown variant `server-side`"),
    ("get without a name", "[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\" }\n", "8:8", "expected `name`"),
    ("namespace of a cluster-scoped resource", "[[client.step]]\nkube = { verb = \"list\", resource = \"namespaces\", namespace = \"default\" }\n", "8:62", "cluster-scoped: it takes no `namespace`"),
    ("unknown subresource", "[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\", subresource = \"scale\" }\n", "8:75", "no subresource \"scale\"; it has none"),
    ("create without an object", "[[client.step]]\nkube = { verb = \"create\", resource = \"configmaps\" }\n", "8:8", "expected `object`"),
    ("unknown resourceVersionMatch", "[[client.step]]\nkube = { verb = \"list\", resource = \"configmaps\", resource_version = \"0\", resource_version_match = \"Latest\" }\n", "8:99", "expected Exact or NotOlderThan"),
    ("continue from a step that is no list", "[[client.step]]\nname = \"g\"\nsleep_ms = 1\n[[client.step]]\nkube = { verb = \"list\", resource = \"configmaps\", continue_from = \"g\" }\n", "11:66", "which is not a `kube` list"),
    ("code out of range", "[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\" }\nexpect = { code = 700 }\n", "9:19", "700 is not an HTTP code"),
    ("fields key that is no pointer", "[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\" }\nexpect = { fields = { \"data.k\" = \"v\" } }\n", "9:21", "not a JSON pointer"),
    ("an HTTP code on an informer", "[[client.step]]\ninformer = { resource = \"configmaps\" }\nexpect = { code = 500, items = [\"zzz\"] }\n", "9:19", "`expect.code` does not apply to a `informer` step; it judges: outcome, synced, rv, relists, expired, store"),
    ("Linearizable held beside apiservers and an etcd writer", "# etcd\n[cluster]\napiservers = 1\n[[client.step]]\nput = { key = \"/a\", value = \"1\" }\n[[client]]\nname = \"k\"\n[[client.step]]\nkube = { verb = \"list\", resource = \"configmaps\" }\n[checks]\nhold = [\"Linearizable\"]\n", "13:9", "`Linearizable` cannot judge this scenario: etcd clients beside apiservers (a)"),
    ("items on a get", "[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\" }\nexpect = { items = [\"x\"] }\n", "9:20", "`expect.items` does not apply"),
    ("etcd expectation on a kube step", "[[client.step]]\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\" }\nexpect = { revision = 3 }\n", "9:23", "`expect.revision` does not apply to a `kube` step"),
    ("unknown watch event type", "[[client.step]]\nkube = { verb = \"watch\", resource = \"configmaps\" }\nexpect.watch_events = [{ type = \"CHANGED\" }]\n", "9:33", "event type \"CHANGED\""),
    ("bookmark the watch did not ask for", "[[client.step]]\nkube = { verb = \"watch\", resource = \"configmaps\" }\nexpect.watch_events = [{ type = \"BOOKMARK\" }]\n", "9:24", "`allow_watch_bookmarks = true`"),
    ("initial-events-end without sendInitialEvents", "[[client.step]]\nkube = { verb = \"watch\", resource = \"configmaps\", allow_watch_bookmarks = true }\nexpect.watch_events = [{ type = \"BOOKMARK\", initial_events_end = true }]\n", "9:24", "`send_initial_events = true`"),
    ("controller on a step that is no informer", "[[client.step]]\nname = \"g\"\nkube = { verb = \"get\", resource = \"configmaps\", name = \"x\" }\n[[client.step]]\ncontroller = { informer = \"g\", name = \"x\", set = { data = { k = \"v\" } } }\n", "11:27", "which is not an `informer`"),
    ("informer_restart of a missing step", "[[client.step]]\ninformer_restart = \"nope\"\n", "8:20", "`informer_restart` names step \"nope\", which no client has"),
    ("apiserver settings for a missing apiserver", "[[apiserver]]\nname = \"apiserver-5\"\nwatch_cache = false\n", "8:8", "no apiserver is named \"apiserver-5\"; expected one of"),
    ("apiserver members naming a missing member", "[[apiserver]]\nname = \"apiserver-1\"\nmembers = [\"etcd-1\", \"etcd-4\"]\n", "9:11", "no member is named \"etcd-4\"; expected one of etcd-1"),
    ("apiserver with member and members", "[[apiserver]]\nname = \"apiserver-1\"\nmember = \"etcd-1\"\nmembers = [\"etcd-1\"]\n", "9:10", "`member` pins one member and `members` lists several: give one"),
    ("apiserver with no members", "[[apiserver]]\nname = \"apiserver-1\"\nmembers = []\n", "9:11", "`members` is empty"),
    ("a cut from peers of an apiserver", "[[fault]]\nat_ms = 5\ncut_from_peers = \"apiserver-1\"\n", "7:1", "`cut_from_peers` cuts a member off from the other members, and \"apiserver-1\" is not a member"),
    ("apiserver workload without apiservers", "# etcd\n[[workload]]\nname = \"t\"\nkind = \"apiserver\"\nclients = 1\nops = 5\n", "6:8", "the cluster has none; set `[cluster] apiservers`"),
    ("unknown apiserver failpoint", "[[failpoint]]\nnode = \"apiserver-1\"\npoint = \"before-compact\"\naction = \"drop\"\n", "7:1", "no failpoint is named \"before-compact\""),
    ("kept writes without writes", "[[client.step]]\nkube = { verb = \"list\", resource = \"configmaps\" }\n[checks]\nhold = [\"AcknowledgedWritesKept\"]\n", "10:9", "AcknowledgedWritesKept judges the scenario's `kube` writes, and it has none"),
    ("cache parity without writes", "[checks]\nhold = [\"WriteOutcomesSameWithoutWatchCache\"]\n", "8:9", "no writes to compare"),
    ("cache parity without a watch cache", "# etcd\n[checks]\nhold = [\"WriteOutcomesSameWithoutWatchCache\"]\n", "5:9", "no apiserver has a watch cache"),
    ("unknown check", "# etcd\n[checks]\nhold = [\"Linearisable\"]\n", "5:9", "unknown variant `Linearisable`, expected one of"),
    ("script_steps on an etcd workload", "# etcd\n[[workload]]\nname = \"t\"\nkind = \"kubernetes\"\nclients = 1\nops = 5\nscript_steps = 3\n", "9:16", "belongs to an `apiserver` workload"),
    ("script_steps of 0", "[[workload]]\nname = \"t\"\nkind = \"apiserver\"\nclients = 1\nops = 5\nscript_steps = 0\n", "12:16", "expected 1 to 1000"),
    ("unknown auth op", "# etcd\n[[client.step]]\nauth = { op = \"user-create\", user = \"u\" }\n", "5:15", "`auth` op \"user-create\" is unknown; expected one of `enable`"),
    ("auth op without its user", "# etcd\n[[client.step]]\nauth = { op = \"user-delete\" }\n", "5:15", "`auth` op `user-delete` needs `user`"),
    ("auth op with a key it does not take", "# etcd\n[[client.step]]\nauth = { op = \"role-add\", role = \"r\", user = \"u\" }\n", "5:46", "`auth` op `role-add` takes no `user`"),
    ("unknown permission", "# etcd\n[[client.step]]\nauth = { op = \"role-grant-permission\", role = \"r\", key = \"/a\", perm = \"all\" }\n", "5:71", "`perm` \"all\" is unknown; expected one of `read`, `write`, `readwrite`"),
    ("user-add with a password and no_password", "# etcd\n[[client.step]]\nauth = { op = \"user-add\", user = \"u\", password = \"p\", no_password = true }\n", "5:50", "`password` contradicts `no_password = true`"),
    ("names on an auth op that lists nothing", "# etcd\n[[client.step]]\nauth = { op = \"enable\" }\nexpect = { names = [\"root\"] }\n", "6:20", "`expect.names` does not apply"),
    ("auth step of a Kubernetes client", "[[client.step]]\nauth = { op = \"enable\" }\n", "7:1", "a Kubernetes client sends `kube` steps, not `auth`"),
    ("token ttl of 0", "# etcd\n[cluster]\nauth_token_ttl_s = 0\n", "5:20", "`auth_token_ttl_s` is 0; expected 1 to 86400"),
    ("an unknown authorization mode", "# etcd\n[cluster]\napiservers = 1\nauthorization_mode = \"Rbac\"\n", "6:22", "is not a valid mode (supported: AlwaysAllow, AlwaysDeny, Node, RBAC); expected modes from AlwaysAllow, AlwaysDeny, Node, RBAC separated by commas; did you mean `RBAC`?"),
    ("a repeated authorization mode", "# etcd\n[cluster]\napiservers = 1\nauthorization_mode = \"RBAC,RBAC\"\n", "6:22", "has mode specified more than once"),
    ("nodes without controller managers", "# etcd\n[cluster]\napiservers = 1\nnodes = 2\n", "6:9", "`nodes` needs a scheduler, which runs beside the controller managers; set `[cluster] controller_managers`"),
    ("too many nodes", "# etcd\n[cluster]\napiservers = 1\ncontroller_managers = 1\nnodes = 21\n", "7:9", "`nodes` is 21; expected 1 to 20"),
    ("no nodes", "# etcd\n[cluster]\napiservers = 1\ncontroller_managers = 1\nnodes = 0\n", "7:9", "`nodes` is 0; expected 1 to 20"),
    ("an authorization mode without apiservers", "# etcd\n[cluster]\nauthorization_mode = \"RBAC\"\n", "5:22", "`authorization_mode` belongs to the apiservers, and the cluster has none"),
    ("a user without apiservers", "# etcd\n[[user]]\nname = \"alice\"\n", "5:8", "a `[[user]]` belongs to the apiservers"),
    ("a user name with a space", "[[user]]\nname = \"bad name\"\n", "8:8", "user name \"bad name\": expected letters, digits"),
    ("a user given twice", "[[user]]\nname = \"u\"\n[[user]]\nname = \"u\"\n", "10:8", "a `[[user]]` named \"u\" already exists"),
    ("a misspelt user key", "[[user]]\nname = \"u\"\ngroup = [\"g\"]\n", "9:1", "unknown field `group`, expected `name` or `groups`; did you mean `groups`?"),
    ("a client of an unknown user", "[[user]]\nname = \"alice\"\n[[client]]\nname = \"b\"\nuser = \"alcie\"\n[[client.step]]\nkube = { verb = \"list\", resource = \"configmaps\" }\n", "11:8", "no `[[user]]` is named \"alcie\"; expected one of alice; did you mean `alice`?"),
    ("a client user where there are none", "[[client]]\nname = \"b\"\nuser = \"alice\"\n[[client.step]]\nkube = { verb = \"list\", resource = \"configmaps\" }\n", "9:8", "the scenario declares none"),
    ("a user on an etcd client", "[[user]]\nname = \"alice\"\n[[client]]\nname = \"b\"\nmember = \"etcd-1\"\nuser = \"alice\"\n", "12:8", "`user` is who a Kubernetes client's requests run as, and this client talks to etcd"),
    ("a webhook without apiservers", "# etcd\n[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\n", "5:8", "a `[[webhook]]` belongs to the apiservers"),
    ("an unknown webhook type", "[[webhook]]\nname = \"guard\"\ntype = \"validatin\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\n", "9:8", "unknown variant `validatin`, expected `validating` or `mutating`; did you mean `validating`?"),
    ("an unknown webhook answer", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"reject\"\n", "11:10", "unknown variant `reject`, expected one of `allow`, `deny`, `patch`, `hang`"),
    ("a webhook without an answer", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\n", "7:1", "missing field `answer`"),
    ("a misspelt webhook key", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\ntimeout = 5\n", "12:1", "unknown field `timeout`, expected one of"),
    ("a failure policy in lowercase", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\nfailure_policy = \"ignore\"\n", "12:18", "unknown variant `ignore`, expected `Fail` or `Ignore`; did you mean `Ignore`?"),
    ("a webhook timeout of 0", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\ntimeout_s = 0\n", "12:13", "`timeout_s` is 0; expected 1 to 30"),
    ("a webhook timeout past 30", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"hang\"\ntimeout_s = 31\n", "12:13", "`timeout_s` is 31; expected 1 to 30"),
    ("an unknown webhook operation", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\noperations = [\"CREAT\"]\n", "12:14", "`operations` lists \"CREAT\"; expected some of CREATE, UPDATE, DELETE, CONNECT, *; did you mean `CREATE`?"),
    ("empty webhook resources", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = []\nanswer = \"deny\"\n", "10:13", "`resources` is empty; expected at least one"),
    ("a message on an allow", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"allow\"\nmessage = \"no\"\n", "12:11", "`message` is a denial's: expected `answer = \"deny\"`"),
    ("a patch answer without a patch", "[[webhook]]\nname = \"guard\"\ntype = \"mutating\"\nresources = [\"configmaps\"]\nanswer = \"patch\"\n", "11:10", "a patch answer sends a JSON patch: expected `patch = [...]`"),
    ("a patch from a validating webhook", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"patch\"\npatch = [{ op = \"add\", path = \"/data\", value = {} }]\n", "11:10", "a validating webhook cannot patch"),
    ("a patch beside a deny", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\npatch = [{ op = \"add\", path = \"/data\", value = {} }]\n", "12:9", "`patch` is a patch answer's"),
    ("a patch with an unknown op", "[[webhook]]\nname = \"guard\"\ntype = \"mutating\"\nresources = [\"configmaps\"]\nanswer = \"patch\"\npatch = [{ op = \"ad\", path = \"/data\" }]\n", "12:9", "operation 1 has `op` \"ad\", not one of add, remove, replace, move, copy, test"),
    ("a patch that is no array", "[[webhook]]\nname = \"guard\"\ntype = \"mutating\"\nresources = [\"configmaps\"]\nanswer = \"patch\"\npatch = { op = \"add\" }\n", "12:9", "`patch`: not a non-empty array"),
    ("a star inside a webhook name pattern", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\nnames = [\"a*b\"]\n", "12:9", "a `*` may only end a name"),
    ("a webhook name that is no DNS label", "[[webhook]]\nname = \"Guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\n", "8:8", "webhook name \"Guard\": expected a DNS label"),
    ("a webhook named as a client", "[[webhook]]\nname = \"k\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\n", "8:8", "the name \"k\" is already taken"),
    ("a webhook given twice", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\n[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\n", "13:8", "the name \"guard\" is already taken"),
    ("a fault on a misspelt webhook", "[[webhook]]\nname = \"guard\"\ntype = \"validating\"\nresources = [\"configmaps\"]\nanswer = \"deny\"\n[[fault]]\nat_ms = 5\nisolate = \"gaurd\"\n", "12:1", "did you mean `guard`?"),
    ("leader-partition on one member", "# etcd\n[nemesis]\npatterns = [\"leader-partition\"]\n", "5:13", "the cluster has one"),
];

#[test]
fn every_bad_file_gets_one_located_error() {
    let mut wrong = Vec::new();
    let kube = KUBE_BAD.iter().map(|(what, body, at, words)| {
        let text = match body.strip_prefix("# etcd\n") {
            Some(rest) => format!("{HEAD}{rest}"),
            None => format!("{KUBE_HEAD}{body}"),
        };
        (what, text, at, words)
    });
    let etcd = BAD.iter().map(|(what, body, at, words)| {
        // A case that starts with its own head replaces the default one.
        let text = if body.starts_with("# x") { body.to_string() } else { format!("{HEAD}{body}") };
        (what, text, at, words)
    });
    for (what, text, at, words) in etcd.chain(kube) {
        match parse("bad.toml", &text) {
            Ok(_) => wrong.push(format!("{what}: parsed, but should fail")),
            Err(e) => {
                let shown = e.to_string();
                let want_at = format!("bad.toml:{at}: ");
                if !shown.starts_with(&want_at) || !shown.contains(words) {
                    wrong.push(format!("{what}:\n    want {want_at}... {words:?}\n    got  {shown}"));
                }
            }
        }
    }
    let total = BAD.len() + KUBE_BAD.len();
    assert!(wrong.is_empty(), "{} of {total} cases wrong:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn a_scenario_with_neither_clients_nor_workloads_is_refused() {
    let e = parse("empty.toml", "# nothing\n").unwrap_err();
    assert!(e.to_string().contains("no `[[client]]` and no `[[workload]]`"), "{e}");
}

#[test]
fn the_name_and_summary_come_from_the_file() {
    let s = parse("scenarios/x/some-race.toml", &format!("# What it shows.\n{}", &HEAD[7..])).unwrap();
    assert_eq!((s.name.as_str(), s.summary.as_str()), ("some-race", "What it shows."));
}

const WATCHED: &str = r#"# Two puts and a watch.
[scenario]
seeds = 1

[[client]]
name = "w"

[[client.step]]
name = "watch"
watch = { key = "/a" }
expect.events = [
  { type = "put", key = "/a", value = "1", mod_revision = "rev_of(one)" },
  { type = "put", key = "/a", value = "3" },
]

[[client.step]]
name = "one"
put = { key = "/a", value = "1" }

[[client.step]]
name = "two"
put = { key = "/a", value = "2" }
expect = { revision = "rev_of(one) + 5" }
"#;

#[test]
fn a_wrong_expectation_fails_with_a_readable_diff() {
    let s = parse("watched.toml", WATCHED).unwrap();
    let r = run(&s, 1);
    let j = judge::judge(&s, &r);
    assert!(!j.passed());
    let failures: Vec<_> = j.failures().collect();
    assert_eq!(failures.len(), 2, "{failures:#?}");
    // The revision: what was expected, what it evaluates to, and what came back.
    assert_eq!(failures[1].what, "revision == rev_of(one) + 5");
    assert_eq!(failures[1].detail, "got 3, expected == rev_of(one) + 5 (= 7)");
    assert_eq!(failures[1].at, "watched.toml:20");
    // The events: both sequences side by side, the differing position marked.
    let diff = &failures[0].detail;
    assert!(diff.starts_with("1 differ:"), "{diff}");
    assert!(diff.contains(" 1 put /a=1 rev=rev_of(one)(=2) "), "{diff}");
    assert!(diff.contains("!  2 put /a=3 "), "{diff}");
    assert!(diff.contains("put /a=2 rev=3 create=2 ver=2"), "{diff}");
    let text = report::outcome(&s, &r, &j);
    assert!(text.contains("FAIL w/watch: events: 1 differ:"), "{text}");
    assert!(text.ends_with("verdict FAIL\n"), "{text}");
}

#[test]
fn the_same_scenario_with_right_expectations_passes_the_same_way_twice() {
    let fixed = WATCHED.replace("value = \"3\"", "value = \"2\"").replace("rev_of(one) + 5", "rev_of(one) + 1");
    let s = parse("watched.toml", &fixed).unwrap();
    let (a, b) = (run(&s, 1), run(&s, 1));
    assert_eq!(a.trace, b.trace);
    let j = judge::judge(&s, &a);
    assert!(j.passed(), "{}", report::outcome(&s, &a, &j));
}

const EVERY_OPERATION: &str = include_str!("../../tests/data/every-operation.toml");

#[test]
fn every_operation_meets_its_expectations_on_every_seed() {
    let s = parse("every-operation.toml", EVERY_OPERATION).unwrap();
    for seed in s.default_seeds() {
        let (a, b) = (run(&s, seed), run(&s, seed));
        assert_eq!(a.trace, b.trace, "seed {seed}: two runs differ");
        let j = judge::judge(&s, &a);
        let text = report::outcome(&s, &a, &j);
        assert!(j.passed(), "seed {seed}:\n{text}");
        // Every step ran and was judged: an expectation that was never evaluated passes nothing.
        assert!(j.findings.len() >= 30, "seed {seed}: only {} findings:\n{text}", j.findings.len());
        assert!(text.contains("two-leases: lease-leases -> ok leases=[grant, grant2]"), "{text}");
        assert!(text.contains("on-grant: lease-ttl grant keys -> ok ttl="), "{text}");
        assert!(text.contains("[2] /k/b=22 create="), "a txn's reads are reported:\n{text}");
    }
}

#[test]
fn wrong_expectations_on_the_less_common_operations_fail() {
    // Each replacement breaks one expectation; the run must fail on exactly that finding.
    let cases: &[(&str, &str, &str)] = &[
        ("sort_order = \"descend\"", "sort_order = \"ascend\"", "c/by-value: kvs"),
        ("min_mod_revision = \"rev_of(b)\"", "min_mod_revision = \"rev_of(a)\"", "c/since-b: kvs"),
        ("keys = [\"/k/a\", \"/k/c\"]", "keys = [\"/k/c\", \"/k/a\"]", "c/on-grant: keys"),
        ("leases = [\"grant\", \"grant2\"]", "leases = [\"grant\"]", "c/two-leases: leases"),
        ("{ succeeded = false },", "{ succeeded = true },", "c/nested: responses[1].succeeded true"),
        ("value = \"22\", mod_revision", "value = \"2\", mod_revision", "c/nested: responses[2].kvs"),
    ];
    for (from, to, finding) in cases {
        assert!(EVERY_OPERATION.contains(from), "{from}");
        let s = parse("every-operation.toml", &EVERY_OPERATION.replacen(from, to, 1)).unwrap();
        let r = run(&s, 1);
        let j = judge::judge(&s, &r);
        let failed: Vec<String> = j.failures().map(|f| format!("{}: {}", f.who, f.what)).collect();
        assert!(
            failed.len() == 1 && failed[0].starts_with(finding),
            "{to}: expected one failure {finding:?}, got {failed:#?}"
        );
    }
}

#[test]
fn a_response_expected_of_the_branch_that_did_not_run_fails() {
    // Without `succeeded`, a response may be written for either branch; here the failure branch's read is
    // expected, but the compare holds and the success branch's put answers instead.
    let text = format!(
        "{HEAD}[[client.step]]\ntxn.compare = [{{ key = \"/a\", target = \"version\", op = \"==\", value = 0 }}]\n\
         txn.success = [{{ put = {{ key = \"/a\", value = \"1\" }} }}]\ntxn.failure = [{{ get = {{ key = \"/a\" }} }}]\n\
         expect = {{ responses = [{{ kvs = [] }}] }}\n"
    );
    let s = parse("branch.toml", &text).unwrap();
    let r = run(&s, 1);
    let j = judge::judge(&s, &r);
    let failed: Vec<String> = j.failures().map(|f| format!("{}: {}", f.what, f.detail)).collect();
    assert_eq!(failed, ["responses[1]: got a put response, which cannot have the `kvs` expected of it"]);
}

/// The library's txn-read-at-compacted-revision scenario catches etcd #18667: with the bug switched on, the
/// members that did not serve the txn apply its write, and their reads say so.
#[test]
fn the_compacted_txn_scenario_catches_the_replicas_diverging() {
    let text = include_str!("../../../scenarios/txn-read-at-compacted-revision.toml");
    let clean = parse("txn-read-at-compacted-revision.toml", text).unwrap();
    assert!(judge::judge(&clean, &run(&clean, 1)).passed());
    let buggy = text.replace("members = 3\n", "members = 3\nbugs = [\"txn-ranges-checked-only-where-served\"]\n");
    let s = parse("txn-read-at-compacted-revision.toml", &buggy).unwrap();
    for seed in 1..=3 {
        let r = run(&s, seed);
        let j = judge::judge(&s, &r);
        let failed: Vec<String> = j.failures().map(|f| format!("{}: {}", f.who, f.what)).collect();
        // The serving member (etcd-2) refused the txn and kept v2; the two others wrote v3.
        for member in ["on-1", "on-3"] {
            assert!(failed.contains(&format!("{member}/{member}#2: kvs")), "seed {seed}: {failed:#?}");
        }
        assert!(!failed.iter().any(|f| f.starts_with("on-2/")), "seed {seed}: {failed:#?}");
        let linearizable = j.checks.iter().find(|c| c.guarantee == crate::checker::Guarantee::Linearizable);
        assert!(linearizable.is_some_and(|c| !c.pass()), "seed {seed}: the stale reads break Linearizable too");
    }
}

/// An apiserver workload over one apiserver with its watch cache, no faults: `{failpoint}` goes where the
/// failpoints are.
const API_WORKLOAD: &str = r#"# An apiserver workload.
[scenario]
seeds = 1

[cluster]
members = 3
apiservers = 1
request_timeout_ms = 4000

[[workload]]
name = "api"
kind = "apiserver"
clients = 3
ops = 150
{failpoint}"#;

/// The apiserver workload's wiring can fail: a cacher that loses one event before dispatching it breaks
/// some seed's watch, and the finding named after the guarantee says so; without the drop the same seeds
/// pass both apiserver findings.
#[test]
fn a_dropped_cacher_dispatch_fails_the_apiserver_workload_watch_finding() {
    let drop = "\n[[failpoint]]\nnode = \"apiserver-1\"\npoint = \"before-cacher-dispatch\"\naction = \"drop\"\n\
                skip = 12\ntimes = 1\n";
    let finding = |j: &judge::Judgement, what: &str| {
        j.findings.iter().find(|f| f.who == "apiserver" && f.what == what).cloned().expect("the finding is there")
    };
    let clean = parse("api.toml", &API_WORKLOAD.replace("{failpoint}", "")).unwrap();
    let dropped = parse("api.toml", &API_WORKLOAD.replace("{failpoint}", drop)).unwrap();
    let mut caught = Vec::new();
    for seed in 1..=5 {
        let r = run(&clean, seed);
        let j = judge::judge(&clean, &r);
        assert!(j.passed(), "seed {seed} without the drop:\n{}", report::outcome(&clean, &r, &j));
        let watched = finding(&j, "WatchFromResourceVersion");
        assert!(!watched.detail.starts_with("0 watches"), "seed {seed}: nothing was watched: {watched:?}");
        let r = run(&dropped, seed);
        assert!(r.trace.iter().any(|l| l.contains("failpoint before-cacher-dispatch drop")), "seed {seed}: no drop");
        let j = judge::judge(&dropped, &r);
        let watched = finding(&j, "WatchFromResourceVersion");
        if !watched.pass {
            assert!(!j.passed(), "seed {seed}: a failing finding fails the run");
            assert_eq!(watched.at, "api.toml:11", "the finding points at the workload");
            caught.push(format!("seed {seed}: {}", watched.detail));
        }
    }
    println!("{}", caught.join("\n"));
    assert!(!caught.is_empty(), "no seed's WatchFromResourceVersion finding noticed the dropped event");
}

/// `WriteOutcomesSameWithoutWatchCache` can fail: the zoo's lagging-cache scenario (kubernetes #82303), asked
/// for the check, keeps it with `stale-suggestion-trusted` off (a cache 500 ms behind changes no write's
/// outcome) and breaks it with the switch on (the run with caches answers 409 where its twin without them
/// answered 200), and the finding names the differing step.
#[test]
fn trusting_a_stale_cached_suggestion_fails_write_outcomes_same_without_watch_cache() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/zoo/update-on-lagging-cache-apiserver.toml");
    let text = std::fs::read_to_string(path).unwrap() + "\n[checks]\nhold = [\"WriteOutcomesSameWithoutWatchCache\"]\n";
    let clean = parse("lagging.toml", &text).unwrap();
    let mut buggy = clean.clone();
    buggy.turn_on("stale-suggestion-trusted").unwrap();
    let parity = |j: &judge::Judgement| {
        j.findings
            .iter()
            .find(|f| f.who == "apiserver" && f.what == "WriteOutcomesSameWithoutWatchCache")
            .cloned()
            .expect("the finding is there")
    };
    for seed in 1..=3 {
        let r = run(&clean, seed);
        assert!(r.without_watch_cache.is_some(), "the check runs the seed's twin");
        let j = judge::judge(&clean, &r);
        let kept = parity(&j);
        assert!(kept.pass, "seed {seed} with the switch off: {kept:?}");
        assert!(!kept.detail.starts_with("0 of"), "seed {seed}: nothing was compared: {kept:?}");
        let r = run(&buggy, seed);
        let broken = parity(&judge::judge(&buggy, &r));
        assert!(!broken.pass, "seed {seed} with the switch on: {broken:?}");
        assert!(broken.detail.contains("409"), "seed {seed}: the finding shows the spurious 409: {}", broken.detail);
    }
}

/// The failpoints where apiserver races live each bite as their bug switch does: `before-http-watch-send`
/// dropping one event on the wire breaks some seed's watch (`WatchFromResourceVersion`), and
/// `before-progress-request` dropping every progress request leaves an idle cache behind, so the zoo's
/// read at a newer resourceVersion fails as with `no-progress-requests` (kubernetes #91073).
#[test]
fn the_http_watch_send_and_progress_request_failpoints_bite() {
    let drop = "\n[[failpoint]]\nnode = \"apiserver-1\"\npoint = \"before-http-watch-send\"\naction = \"drop\"\n\
                skip = 20\ntimes = 1\n";
    let dropped = parse("api.toml", &API_WORKLOAD.replace("{failpoint}", drop)).unwrap();
    let mut caught = 0;
    for seed in 1..=5 {
        let r = run(&dropped, seed);
        assert!(r.trace.iter().any(|l| l.contains("failpoint before-http-watch-send drop")), "seed {seed}: no drop");
        let j = judge::judge(&dropped, &r);
        let watched = j.findings.iter().find(|f| f.who == "apiserver" && f.what == "WatchFromResourceVersion");
        caught += usize::from(watched.is_some_and(|f| !f.pass));
    }
    assert!(caught > 0, "no seed's WatchFromResourceVersion finding noticed the event lost on the wire");

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/zoo/cache-read-at-newer-rv-idle-resource.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let no_progress =
        "\n[[failpoint]]\nnode = \"apiserver-1\"\npoint = \"before-progress-request\"\naction = \"drop\"\n";
    let clean = parse("idle.toml", &text).unwrap();
    let starved = parse("idle.toml", &(text.clone() + no_progress)).unwrap();
    let mut switched = clean.clone();
    switched.turn_on("no-progress-requests").unwrap();
    for seed in 1..=3 {
        assert!(judge::judge(&clean, &run(&clean, seed)).passed(), "seed {seed} passes as it is");
        let failed = |s: &super::Scenario| -> Vec<String> {
            let j = judge::judge(s, &run(s, seed));
            j.failures().map(|f| format!("{}: {}", f.who, f.what)).collect()
        };
        let (by_failpoint, by_switch) = (failed(&starved), failed(&switched));
        assert!(!by_failpoint.is_empty(), "seed {seed}: dropped progress requests changed nothing");
        assert_eq!(by_failpoint, by_switch, "seed {seed}: the failpoint fails the scenario as the switch does");
    }
}

/// The two expectations that used to pass unjudged: a controller step's `code`, `rv` and `fields` (now each a
/// failing finding), and an informer's `code` and `items` (refused before the run, above).
#[test]
fn a_controllers_wrong_expectations_each_fail() {
    let text = format!(
        "{KUBE_HEAD}[[client.step]]\nname = \"create\"\nkube = {{ verb = \"create\", resource = \"configmaps\", object = {{ metadata = {{ name = \"a\" }}, data = {{ v = \"1\" }} }} }}\n\
         [[client.step]]\nname = \"cms\"\ninformer = {{ resource = \"configmaps\" }}\n\
         [[client.step]]\ncontroller = {{ informer = \"cms\", name = \"a\", set = {{ data = {{ v = \"2\" }} }} }}\n\
         expect = {{ code = 418, rv = \"99\", fields = {{ \"/data/v\" = \"nope\" }} }}\n"
    );
    let s = parse("controller.toml", &text).unwrap();
    let j = judge::judge(&s, &run(&s, 1));
    let failed: Vec<&str> = j.failures().map(|f| f.key).collect();
    assert_eq!(failed, ["outcome", "code", "fields", "rv"], "{:#?}", j.findings);
}

/// `code = [200, 409]` with a `reason` means "if it is refused, for this reason": a 200 passes, a refusal
/// with that reason passes, a refusal with another fails.
#[test]
fn a_reason_beside_codes_that_accept_success_judges_only_a_refusal() {
    let head = format!(
        "{KUBE_HEAD}[[client.step]]\nname = \"create\"\nkube = {{ verb = \"create\", resource = \"configmaps\", object = {{ metadata = {{ name = \"a\" }} }} }}\n"
    );
    let cases = [
        ("get", "name = \"a\"", "code = [200, 404], reason = \"NotFound\"", true),
        ("get", "name = \"b\"", "code = [200, 404], reason = \"NotFound\"", true),
        ("get", "name = \"b\"", "code = [200, 404], reason = \"Conflict\"", false),
        ("get", "name = \"a\"", "reason = \"NotFound\"", false),
    ];
    for (verb, params, expect, passes) in cases {
        let text = format!(
            "{head}[[client.step]]\nkube = {{ verb = \"{verb}\", resource = \"configmaps\", {params} }}\nexpect = {{ {expect} }}\n"
        );
        let s = parse("reason.toml", &text).unwrap();
        let j = judge::judge(&s, &run(&s, 1));
        let shown: Vec<String> = j.findings.iter().map(|f| format!("{} {}: {}", f.pass, f.what, f.detail)).collect();
        assert_eq!(j.passed(), passes, "{params} {expect}: {shown:#?}");
    }
}

/// The net under the kinds' judges: a written key that gave no finding fails its step, and one that did
/// not leave a step passing.
#[test]
fn a_written_key_without_a_finding_fails_its_step() {
    use crate::scenario::lang::expectations::Expectations;
    use crate::scenario::steps::judging::StepJudge;
    let history = crate::history::History::new();
    let leases = std::collections::BTreeMap::new();
    let env = |_: &str| None;
    let mut out = Vec::new();
    let mut j = StepJudge {
        who: "c/s".into(),
        at: "x.toml:3".into(),
        env: &env,
        leases: &leases,
        history: &history,
        out: &mut out,
    };
    j.push("revision", "revision == 3", true, "got 3");
    let mut e = Expectations::default();
    e.written.insert("revision");
    e.written.insert("kvs");
    super::judge::unjudged(&mut j, 0, &e);
    let failed: Vec<(&str, &str)> = out.iter().filter(|f| !f.pass).map(|f| (f.key, f.what.as_str())).collect();
    assert_eq!(failed, [("kvs", "expect.kvs")]);
}

/// A fault aimed at the leader that ends before any member could time out its election is pointed out:
/// it cannot change the leader, which is rarely what its author meant.
#[test]
fn a_leader_fault_shorter_than_an_election_timeout_is_pointed_out() {
    let short = "[cluster]\nmembers = 3\n[[client.step]]\nsleep_ms = 1\n[[fault]]\nat_ms = 5\npause = \"leader\"\nfor_ms = 300\n";
    let s = parse("short.toml", &format!("{HEAD}{short}")).unwrap();
    assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
    assert!(
        s.notes[0].starts_with("short.toml:8: `pause leader` for 300 ms is shorter than an election timeout (1000 ms)"),
        "{:?}",
        s.notes
    );
    let long = short.replace("for_ms = 300", "for_ms = 3000");
    assert!(parse("long.toml", &format!("{HEAD}{long}")).unwrap().notes.is_empty());
}

/// A relation is judged from what its steps observed: two requests that both succeed fail
/// `exactly_one_succeeded`; a write seen by a later read passes `if_succeeded`, and fails when the read runs
/// first.
#[test]
fn relations_are_judged_across_steps() {
    let a = "[[client.step]]\nname = \"a\"\nput = { key = \"/x\", value = \"a\" }\n";
    let b = "[[client.step]]\nname = \"b\"\nput = { key = \"/y\", value = \"b\" }\n";
    let read = "[[client.step]]\nname = \"read\"\nget = { key = \"/y\" }\n";
    let relations = "[[relation]]\nexactly_one_succeeded = [\"a\", \"b\"]\n[[relation]]\nif_succeeded = \"b\"\nthen_seen_by = \"read\"\n";
    let findings = |steps: &str| {
        let s = parse("rel.toml", &format!("{HEAD}{steps}{relations}")).unwrap();
        let j = judge::judge(&s, &run(&s, 1));
        j.findings.iter().filter(|f| f.who == "relation").map(|f| (f.pass, f.detail.clone())).collect::<Vec<_>>()
    };
    let after = findings(&format!("{a}{b}{read}"));
    assert_eq!(
        after,
        [(false, "a succeeded, b succeeded".to_string()), (true, "b at revision 3, read at revision 3".to_string())]
    );
    let before = findings(&format!("{a}{read}{b}"));
    assert_eq!(before[1], (false, "b at revision 3, read at revision 2".to_string()));
}

/// `AcknowledgedWritesKept` holds over the library's crash scenario, and names every acknowledged write a
/// member that acknowledges before its disk syncs (`skip-sync`, etcd #14370) loses in the crash.
#[test]
fn acknowledged_writes_kept_catches_writes_a_crash_lost() {
    let text = include_str!("../../../scenarios/apiserver-writes-survive-member-crash.toml");
    let clean = parse("crash.toml", text).unwrap();
    let j = judge::judge(&clean, &run(&clean, 1));
    let kept = j.findings.iter().find(|f| f.what == "AcknowledgedWritesKept").unwrap();
    assert!(kept.pass && kept.detail.starts_with("5 acknowledged writes found in etcd"), "{kept:?}");
    let mut buggy = parse("crash.toml", text).unwrap();
    buggy.turn_on("skip-sync").unwrap();
    let j = judge::judge(&buggy, &run(&buggy, 1));
    let kept = j.findings.iter().find(|f| f.what == "AcknowledgedWritesKept").unwrap();
    assert!(!kept.pass && kept.detail.starts_with("5 acknowledged writes lost"), "{kept:?}");
}
