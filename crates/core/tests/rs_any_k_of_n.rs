//! The simulator decides decodability of a shortened Reed–Solomon block by
//! counting ("any k of n received", `linklab_core::fec`). This test encodes
//! real random bytes with a maintained RS implementation over GF(2⁸)
//! (`reed-solomon-erasure`), erases random subsets of shards, and checks that
//! reconstruction succeeds — and returns the original bytes — exactly when
//! the rule says the block decodes.

use linklab_core::fec::RsCode;
use proptest::prelude::*;
use reed_solomon_erasure::galois_8::ReedSolomon;
use std::sync::OnceLock;

/// One encoder per code of [`CODES`], built once (building inverts a k×k matrix).
fn encoder(code: RsCode) -> &'static ReedSolomon {
    static ENCODERS: OnceLock<Vec<ReedSolomon>> = OnceLock::new();
    let all = ENCODERS.get_or_init(|| {
        CODES
            .iter()
            .map(|&(n, k)| {
                ReedSolomon::new(k as usize, (n - k) as usize).expect("valid RS parameters")
            })
            .collect()
    });
    let i = CODES
        .iter()
        .position(|&(n, k)| (n, k) == (i64::from(code.n()), i64::from(code.k())))
        .expect("code listed in CODES");
    &all[i]
}

/// Encode `data` (k shards of `len` bytes) into n shards, erase `erased`, and
/// try to reconstruct. Returns whether it succeeded with the original data.
fn roundtrip(code: RsCode, len: usize, seed_bytes: &[u8], erased: &[bool]) -> bool {
    let (n, k) = (code.n() as usize, code.k() as usize);
    let rs = encoder(code);
    let mut shards: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            if i < k {
                (0..len)
                    .map(|j| {
                        seed_bytes[(i * len + j) % seed_bytes.len()] ^ (i as u8).wrapping_mul(31)
                    })
                    .collect()
            } else {
                vec![0u8; len]
            }
        })
        .collect();
    rs.encode(&mut shards).expect("encode");
    let original: Vec<Vec<u8>> = shards[..k].to_vec();
    let mut received: Vec<Option<Vec<u8>>> = shards
        .into_iter()
        .zip(erased)
        .map(|(s, &e)| if e { None } else { Some(s) })
        .collect();
    match rs.reconstruct_data(&mut received) {
        Ok(()) => {
            let got: Vec<Vec<u8>> = received[..k].iter().map(|s| s.clone().unwrap()).collect();
            assert_eq!(got, original, "reconstruction returned wrong bytes");
            true
        }
        Err(_) => false,
    }
}

/// Codes exercised: the hybrid scheme's (10, 9), matched LL-FEC codes, LT-TCP
/// sized blocks, and the RS limits (n = 255, k = 1).
const CODES: [(i64, i64); 8] = [
    (10, 9),
    (12, 9),
    (18, 9),
    (2, 1),
    (4, 1),
    (40, 30),
    (255, 223),
    (255, 1),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn decodes_iff_any_k_of_n_arrive(
        ci in 0..CODES.len(),
        len in 1usize..16,
        bytes in proptest::collection::vec(any::<u8>(), 1..256),
        erase_seed in any::<u64>(),
        density in 0.0f64..1.0,
    ) {
        let code = RsCode::new(CODES[ci].0, CODES[ci].1).unwrap();
        let n = code.n() as usize;
        // A random erasure pattern with about `density` of the shards erased,
        // biased around the threshold n − k so both outcomes are common.
        let mut x = erase_seed | 1;
        let threshold = f64::from(code.repair()) / n as f64;
        let p = (threshold + (density - 0.5) * 0.4).clamp(0.0, 1.0);
        let erased: Vec<bool> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 11) as f64 / (1u64 << 53) as f64) < p
            })
            .collect();
        let received = erased.iter().filter(|e| !**e).count() as u32;
        prop_assert_eq!(roundtrip(code, len, &bytes, &erased), code.decodable(received));
    }
}

#[test]
fn exactly_k_shards_decode_and_k_minus_one_do_not() {
    for &(n, k) in &CODES {
        let code = RsCode::new(n, k).unwrap();
        let (n, k) = (n as usize, k as usize);
        // Keep only the repair shards plus the last data shards: the hardest case.
        let keep_k: Vec<bool> = (0..n).map(|i| i < n - k).collect();
        assert!(
            roundtrip(code, 16, &[1, 2, 3, 5, 8, 13], &keep_k),
            "({n},{k}) with k shards"
        );
        let mut keep_fewer = keep_k.clone();
        keep_fewer[n - 1] = true;
        assert!(
            !roundtrip(code, 16, &[1, 2, 3], &keep_fewer),
            "({n},{k}) with k - 1 shards"
        );
    }
}
