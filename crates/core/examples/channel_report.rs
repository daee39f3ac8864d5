//! Burst statistics of the Rayleigh fading channel, for `docs/models/channel.md`:
//! `cargo run --release -p linklab-core --example channel_report`.
//! Prints, per normalised Doppler f_d·T at FER 10 %, the fraction of bad slots
//! and the mean run of bad slots, pooled over many channel instances.

use linklab_core::channel::{Channel, Rayleigh};
use linklab_core::rng::Rng;
use linklab_core::time::Time;

fn main() {
    let slot = Time::from_millis(10);
    println!("fd_t      bad_fraction  mean_burst_slots  fades");
    for fd_t in [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5] {
        let slots = ((200.0 / fd_t) as u64).max(20_000);
        let (mut bad, mut runs, mut total) = (0u64, 0u64, 0u64);
        for inst in 0..50u64 {
            let mut ch = Rayleigh::new(slot, fd_t, 0.1, 0.0, 1.0, Rng::stream(inst, "report"));
            let mut prev = false;
            for k in 0..slots {
                ch.advance(Time(slot.0 * k));
                let b = ch.is_bad();
                bad += u64::from(b);
                runs += u64::from(b && !prev);
                prev = b;
                total += 1;
            }
        }
        let mean = if runs > 0 {
            bad as f64 / runs as f64
        } else {
            0.0
        };
        println!(
            "{fd_t:<8}  {:.4}        {mean:>9.3}         {runs}",
            bad as f64 / total as f64
        );
    }
}
