//! Why an action needs the owner's leave ([`Sensitive`]), and the classes of leave the owner
//! gives with `--allow-sensitive` ([`SensitiveClass`]). Asking a person is the tools' work.

use std::fmt;

/// Why an action needs the owner's leave (and, when allowed, a person's yes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensitive {
    /// Unlocking a lock.
    Unlock,
    /// Opening a garage door or gate.
    OpenBarrier,
    /// Silencing a siren.
    Silence,
    /// Sounding another tone on a siren that sounds one: the new tone ends the old (an
    /// alarm ended by a doorbell), so it is as sensitive as silencing it.
    ReplaceTone,
    /// Any action on a device the owner marked sensitive (`--sensitive-device`).
    Marked,
}

impl Sensitive {
    /// The class of device the owner allows it for (`--allow-sensitive lock`); none for a
    /// marked device, which needs a person's yes but no class of leave.
    pub fn class(self) -> Option<SensitiveClass> {
        match self {
            Self::Unlock => Some(SensitiveClass::Lock),
            Self::OpenBarrier => Some(SensitiveClass::Garage),
            Self::Silence | Self::ReplaceTone => Some(SensitiveClass::Siren),
            Self::Marked => None,
        }
    }
}

/// A class of sensitive actions the owner can allow (`--allow-sensitive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SensitiveClass {
    /// `lock`: unlock a lock.
    Lock,
    /// `garage`: open a garage door or gate.
    Garage,
    /// `siren`: silence a siren (or end its tone with another).
    Siren,
}

impl SensitiveClass {
    /// Every class, in the order `--help` lists them.
    pub const ALL: [Self; 3] = [Self::Lock, Self::Garage, Self::Siren];

    /// The class's name, as the flag takes it and messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Lock => "lock",
            Self::Garage => "garage",
            Self::Siren => "siren",
        }
    }
}

impl fmt::Display for SensitiveClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// Written out rather than derived: the derive would turn each variant's doc into a help line,
// and `--help` lists the classes in the flag's own text, as it did when they were strings.
impl clap::ValueEnum for SensitiveClass {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum as _;

    use super::*;

    #[test]
    fn every_class_is_taken_by_its_name_and_nothing_else() {
        for class in SensitiveClass::ALL {
            assert_eq!(SensitiveClass::from_str(class.name(), false), Ok(class));
        }
        assert!(SensitiveClass::from_str("Lock", false).is_err());
        assert!(SensitiveClass::from_str("device", false).is_err());
    }
}
