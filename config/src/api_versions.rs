//! The `apiVersion`s of the configuration files seedlet reads, in one place: the decoder picks
//! the type by them and error messages list them.

/// `apiVersion` of gardenlet's `GardenletConfiguration`.
pub const GARDENLET: &str = "gardenlet.config.gardener.cloud/v1alpha1";
/// `apiVersion` of seedlet's `GardenControllerConfiguration`.
pub const GARDEN_CONTROLLER: &str = "seedlet.gardener.cloud/v1alpha1";
/// `apiVersion` of gardener-controller-manager's `ControllerManagerConfiguration`.
pub const CONTROLLER_MANAGER: &str = "controllermanager.config.gardener.cloud/v1alpha1";
/// Every `apiVersion` seedlet reads.
pub const KNOWN: [&str; 3] = [GARDENLET, GARDEN_CONTROLLER, CONTROLLER_MANAGER];
