//! Component configuration for the seedlet agent and garden controller.
