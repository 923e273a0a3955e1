//! The kinds of bus transfer the error model tells apart: `bus` by its number of
//! sources, and the dividing `bus2` and `bus3`. Named once here; the profile's keys,
//! the noise layer's tables and the calibration's scaling all read them from this type.

/// A kind of bus transfer, as the error model tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BusKind {
    /// `bus(w)`: a reset to 0.
    Bus0,
    /// `bus(w, r1)`.
    Bus1,
    /// `bus(w, r1, r2)`.
    Bus2,
    /// `bus(w, r1, r2, r3)`.
    Bus3,
    /// `bus(w, r1, r2, r3, r4)`.
    Bus4,
    /// `bus2(w1, w2, ...)`: the current split between two receivers (division by two).
    Half,
    /// `bus3(w1, w2, w3, r1)`: the current split between three receivers.
    Third,
}

impl BusKind {
    /// Every kind, in the order of the profile file.
    pub const ALL: [BusKind; 7] = [
        BusKind::Bus0,
        BusKind::Bus1,
        BusKind::Bus2,
        BusKind::Bus3,
        BusKind::Bus4,
        BusKind::Half,
        BusKind::Third,
    ];

    /// Number of kinds (the length of per-kind tables).
    pub(crate) const COUNT: usize = BusKind::ALL.len();

    /// The kind of a transfer with `receivers` receivers and `sources` sources (more
    /// than four sources count as four: the instruction set allows no more).
    pub(crate) fn of(receivers: usize, sources: usize) -> BusKind {
        match (receivers, sources) {
            (2, _) => BusKind::Half,
            (3.., _) => BusKind::Third,
            (_, 0) => BusKind::Bus0,
            (_, 1) => BusKind::Bus1,
            (_, 2) => BusKind::Bus2,
            (_, 3) => BusKind::Bus3,
            _ => BusKind::Bus4,
        }
    }

    /// Position in [`BusKind::ALL`] (an index into per-kind tables).
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The key of the kind in a profile's `transfer` section.
    pub fn key(self) -> &'static str {
        match self {
            BusKind::Bus0 => "bus_0",
            BusKind::Bus1 => "bus_1",
            BusKind::Bus2 => "bus_2",
            BusKind::Bus3 => "bus_3",
            BusKind::Bus4 => "bus_4",
            BusKind::Half => "bus2",
            BusKind::Third => "bus3",
        }
    }

    /// How many receivers share the bus current.
    pub fn receivers(self) -> usize {
        match self {
            BusKind::Half => 2,
            BusKind::Third => 3,
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_receivers_then_sources() {
        for (i, k) in BusKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
        }
        for s in 0..=4 {
            assert_eq!(BusKind::of(1, s), BusKind::ALL[s]);
            assert_eq!(BusKind::of(2, s), BusKind::Half);
            assert_eq!(BusKind::of(3, s), BusKind::Third);
        }
        for k in BusKind::ALL {
            let r = k.receivers();
            assert_eq!(BusKind::of(r, 1).receivers(), r);
        }
        assert_eq!(BusKind::of(1, 9), BusKind::Bus4);
    }
}
