//! The extension kinds (`extensions.gardener.cloud/v1alpha1`) as a type instead of strings, and
//! the `Kind/type` identifier upstream uses for a kind served for one provider type.

use std::fmt;

/// One extension kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExtensionKind {
    /// `BackupBucket`.
    BackupBucket,
    /// `BackupEntry`.
    BackupEntry,
    /// `Bastion`.
    Bastion,
    /// `ContainerRuntime`.
    ContainerRuntime,
    /// `ControlPlane`.
    ControlPlane,
    /// `DNSRecord`.
    DnsRecord,
    /// `Extension`.
    Extension,
    /// `Infrastructure`.
    Infrastructure,
    /// `Network`.
    Network,
    /// `OperatingSystemConfig`.
    OperatingSystemConfig,
    /// `SelfHostedShootExposure`.
    SelfHostedShootExposure,
    /// `Worker`.
    Worker,
}

impl ExtensionKind {
    /// Every kind, in the order gardenlet lists them.
    pub const ALL: [ExtensionKind; 12] = [
        Self::BackupBucket,
        Self::BackupEntry,
        Self::Bastion,
        Self::ContainerRuntime,
        Self::ControlPlane,
        Self::DnsRecord,
        Self::Extension,
        Self::Infrastructure,
        Self::Network,
        Self::OperatingSystemConfig,
        Self::SelfHostedShootExposure,
        Self::Worker,
    ];

    /// The kinds whose `status.state` a ShootState keeps, in gardenlet's listing order.
    pub const SHOOT_STATE: [ExtensionKind; 9] = [
        Self::BackupEntry,
        Self::ContainerRuntime,
        Self::ControlPlane,
        Self::DnsRecord,
        Self::Extension,
        Self::Infrastructure,
        Self::Network,
        Self::OperatingSystemConfig,
        Self::Worker,
    ];

    /// The kind's name as the API spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BackupBucket => "BackupBucket",
            Self::BackupEntry => "BackupEntry",
            Self::Bastion => "Bastion",
            Self::ContainerRuntime => "ContainerRuntime",
            Self::ControlPlane => "ControlPlane",
            Self::DnsRecord => "DNSRecord",
            Self::Extension => "Extension",
            Self::Infrastructure => "Infrastructure",
            Self::Network => "Network",
            Self::OperatingSystemConfig => "OperatingSystemConfig",
            Self::SelfHostedShootExposure => "SelfHostedShootExposure",
            Self::Worker => "Worker",
        }
    }

    /// The kind named `name`, if it is an extension kind.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// Whether a ShootState keeps the state of this kind.
    pub fn in_shoot_state(self) -> bool {
        Self::SHOOT_STATE.contains(&self)
    }
}

impl fmt::Display for ExtensionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `Kind/type`: the identifier upstream uses for a kind served for one provider type (the keys
/// of the wanted set, the entries of a `Required` condition's message).
pub fn kind_type(kind: impl fmt::Display, type_: &str) -> String {
    format!("{kind}/{type_}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for kind in ExtensionKind::ALL {
            assert_eq!(ExtensionKind::from_name(kind.as_str()), Some(kind));
        }
        assert_eq!(ExtensionKind::from_name("Shoot"), None);
        assert_eq!(ExtensionKind::DnsRecord.to_string(), "DNSRecord");
    }

    #[test]
    fn shoot_state_kinds_are_all_but_buckets_bastions_and_exposures() {
        let left_out: Vec<_> = ExtensionKind::ALL
            .into_iter()
            .filter(|kind| !kind.in_shoot_state())
            .collect();
        assert_eq!(
            left_out,
            [
                ExtensionKind::BackupBucket,
                ExtensionKind::Bastion,
                ExtensionKind::SelfHostedShootExposure
            ]
        );
    }

    #[test]
    fn kind_type_joins_with_a_slash() {
        assert_eq!(kind_type(ExtensionKind::Worker, "local"), "Worker/local");
        assert_eq!(kind_type("Extension", "shoot-dns"), "Extension/shoot-dns");
    }
}
