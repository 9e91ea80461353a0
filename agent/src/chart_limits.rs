//! The renderer bounds every chart the agent renders obeys
//! (`controllers.controllerInstallation.chartLimits`): an extension's chart in the
//! ControllerInstallation controller and the control-plane chart of the Shoot controller read the
//! same setting.

/// The renderer's bounds from `controllers.controllerInstallation.chartLimits` (a count too large
/// for this platform means no bound).
pub fn limits(config: &seedlet_config::gardenlet::ChartLimits) -> seedlet_chartrender::Limits {
    let size = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
    seedlet_chartrender::Limits {
        max_entries: size(config.max_entries),
        max_total_bytes: config.max_total_bytes,
        max_file_bytes: config.max_file_bytes,
        max_depth: size(config.max_depth),
        max_value_bytes: size(config.max_value_bytes),
        max_value_items: size(config.max_value_items),
        max_output_bytes: config.max_output_bytes,
        max_render_time: config.max_render_time.as_std(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_chart_limits_default_to_the_renderer_defaults() {
        let config = seedlet_config::gardenlet::ChartLimits::default();
        assert_eq!(limits(&config), seedlet_chartrender::Limits::default());
        let tight = seedlet_config::gardenlet::ChartLimits {
            max_value_bytes: 1024,
            max_render_time: seedlet_config::Duration::from_secs(1),
            ..config
        };
        let mapped = limits(&tight);
        assert_eq!(mapped.max_value_bytes, 1024);
        assert_eq!(mapped.max_render_time, std::time::Duration::from_secs(1));
    }
}
