//! `permissions.network` on a contained command (`sandgate exec` and MCP
//! `exec_run`): whether its network is filtered by host, and the isolation
//! it then runs under. The proxy itself is served by the binary (see
//! `sandgate_net`), through `dispatch::NetworkServe`.

use sandgate_policy::config::{IsolationConfig, IsolationMode};
use sandgate_policy::Policy;

/// The isolation `config` a contained command runs with under `policy`,
/// and whether its network is filtered by host. `permissions.network`
/// turns the network on, filtered, unless the isolation says `network:
/// false` (no network at all). Only `landlock` and `bwrap` filter: any
/// other mode keeps its own `network` setting (turning it on there would
/// not be filtered).
pub fn isolation_config(
    policy: &Policy,
    config: Option<&IsolationConfig>,
) -> (Option<IsolationConfig>, bool) {
    let filtered = policy.network().is_some()
        && config.is_some_and(|c| {
            c.network != Some(false)
                && matches!(c.mode, Some(IsolationMode::Landlock | IsolationMode::Bwrap))
        });
    if !filtered {
        return (config.cloned(), false);
    }
    let mut with_network = config.cloned().unwrap_or_default();
    with_network.network = Some(true);
    (Some(with_network), true)
}
