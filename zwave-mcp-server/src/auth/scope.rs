//! What a grant lets a client do: the four scopes the owner chooses from, and which scope each
//! tool and method needs.

use std::fmt;

/// One thing the owner may let a client do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Lists, status, readings, health, resources, prompts.
    Read,
    /// Writes that are not sensitive: switch, dim, set a thermostat.
    Control,
    /// Unlock, open, silence: still behind `--allow-sensitive` and a person's yes each time.
    Sensitive,
    /// Upkeep: still behind `--allow-maintenance`.
    Maintenance,
}

impl Scope {
    /// Every scope, in the order pages show them.
    pub const ALL: [Self; 4] = [
        Self::Read,
        Self::Control,
        Self::Sensitive,
        Self::Maintenance,
    ];

    /// Its name on the wire (`scope` parameters, metadata).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Control => "control",
            Self::Sensitive => "sensitive",
            Self::Maintenance => "maintenance",
        }
    }

    /// What it allows, in the owner's words (the consent page).
    pub const fn meaning(self) -> &'static str {
        match self {
            Self::Read => "see the devices, their state, readings and the network's health",
            Self::Control => "switch, dim and set devices (not locks, garage doors or sirens)",
            Self::Sensitive => {
                "unlock, open garage doors and silence sirens, where this server allows it, each time only after a person says yes"
            }
            Self::Maintenance => {
                "run upkeep on devices (heal routes, re-interview), where this server allows it"
            }
        }
    }

    /// The scope named `name`, if it is one.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.name() == name)
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Scopes(u8);

impl Scopes {
    /// Every scope.
    pub const ALL: Self = Self(0b1111);

    /// The set holding `scopes`.
    pub fn of(scopes: impl IntoIterator<Item = Scope>) -> Self {
        Self(scopes.into_iter().fold(0, |bits, scope| bits | scope.bit()))
    }

    /// Whether it holds `scope`.
    pub const fn has(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// Whether it holds none.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The scopes it holds, in order.
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |scope| self.has(*scope))
    }

    /// What both hold.
    #[must_use]
    pub const fn and(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// The bits, for a token (`from_bits` reads them back).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The set of `bits`, when they name scopes only.
    pub const fn from_bits(bits: u8) -> Option<Self> {
        if bits & !Self::ALL.0 == 0 {
            Some(Self(bits))
        } else {
            None
        }
    }

    /// A `scope` parameter (space-separated names) read: the scopes it names, and the first
    /// word that names none.
    ///
    /// # Errors
    /// A word that is no scope of this server, as given.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut scopes = Self::default();
        for word in text.split(' ').filter(|word| !word.is_empty()) {
            match Scope::named(word) {
                Some(scope) => scopes = Self(scopes.0 | scope.bit()),
                None => return Err(word.to_owned()),
            }
        }
        Ok(scopes)
    }
}

impl fmt::Display for Scopes {
    /// Space-separated names, as a `scope` parameter has them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for scope in self.iter() {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(scope.name())?;
            first = false;
        }
        Ok(())
    }
}

/// The scope a tool call needs before its arguments are looked at: `read` for the reads,
/// `control` for the control tool (a sensitive action needs `sensitive` too, known once the
/// device is), `maintenance` for upkeep. An unknown tool needs `read` (it is refused as
/// unknown, whatever the grant).
pub fn for_tool(name: &str) -> Scope {
    match name {
        "control_zwave_device" => Scope::Control,
        "maintain_zwave_device" => Scope::Maintenance,
        _ => Scope::Read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_read_and_write_as_the_wire_has_them() {
        let scopes = Scopes::parse("control  read").unwrap();
        assert_eq!(scopes.to_string(), "read control");
        assert!(scopes.has(Scope::Read) && !scopes.has(Scope::Sensitive));
        assert_eq!(Scopes::parse("read admin"), Err("admin".to_owned()));
        assert_eq!(Scopes::parse("").unwrap(), Scopes::default());
        assert_eq!(
            Scopes::ALL.to_string(),
            "read control sensitive maintenance"
        );
        assert_eq!(Scopes::from_bits(Scopes::ALL.bits()), Some(Scopes::ALL));
        assert_eq!(Scopes::from_bits(0b1_0000), None);
    }

    #[test]
    fn each_tool_needs_its_scope() {
        assert_eq!(for_tool("list_zwave_devices"), Scope::Read);
        assert_eq!(for_tool("get_zwave_health"), Scope::Read);
        assert_eq!(for_tool("control_zwave_device"), Scope::Control);
        assert_eq!(for_tool("maintain_zwave_device"), Scope::Maintenance);
    }
}
