//! ControllerInstallations of this seed (spec §2): the main controller installs the extension
//! chart through a ManagedResource ([`main`]), the care controller reports `Installed`/`Healthy`/
//! `Progressing` from it ([`care`]), the required controller reports `Required` from the
//! extension objects in the seed ([`required`]); [`events`] decides which change of `Installed`
//! is worth an Event. [`controllers`] registers all three with the agent.

pub mod care;
pub mod events;
pub mod main;
pub mod required;

use crate::context::ControllerSpec;

/// The three ControllerInstallation controllers, each restarted by the agent on failure.
pub fn controllers() -> Vec<ControllerSpec> {
    vec![
        ControllerSpec::new(main::NAME, |ctx| Box::pin(main::run(ctx))),
        ControllerSpec::new(care::NAME, |ctx| Box::pin(care::run(ctx))),
        ControllerSpec::new(required::NAME, |ctx| Box::pin(required::run(ctx))),
    ]
}
