//! Erasure codes: shortened Reed–Solomon codes over GF(2⁸).
//!
//! The simulator carries no payload bytes, so a code is described by its
//! length `n` and dimension `k` only; decodability follows the MDS property of
//! Reed–Solomon codes: any `k` of the `n` symbols (packets) rebuild the block.

/// A shortened Reed–Solomon code RS(n, k) over GF(2⁸): `k` data packets, `n − k` repair packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RsCode {
    /// Code length (packets per block), at most 255.
    pub n: u16,
    /// Data packets per block.
    pub k: u16,
}

impl RsCode {
    /// RS(n, k); requires 1 ≤ k < n ≤ 255.
    pub fn new(n: u16, k: u16) -> Result<RsCode, String> {
        if k == 0 || k >= n || n > 255 {
            return Err(format!(
                "RS({n}, {k}) is not a shortened Reed-Solomon code over GF(2^8); need 1 <= k < n <= 255"
            ));
        }
        Ok(RsCode { n, k })
    }

    /// Repair packets per block (`n − k`).
    pub fn repair(&self) -> u16 {
        self.n - self.k
    }
}

/// Whether a block of `k` data packets is rebuilt from `received` distinct packets (any k of n).
pub fn decodable(received: usize, k: usize) -> bool {
    received >= k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_limits() {
        assert!(RsCode::new(255, 254).is_ok());
        assert_eq!(RsCode::new(10, 7).unwrap().repair(), 3);
        assert!(RsCode::new(256, 200).is_err());
        assert!(RsCode::new(10, 10).is_err());
        assert!(RsCode::new(10, 0).is_err());
    }

    #[test]
    fn any_k_of_n() {
        assert!(decodable(7, 7));
        assert!(decodable(9, 7));
        assert!(!decodable(6, 7));
    }
}
