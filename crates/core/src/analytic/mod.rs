//! Closed-form and numerical models that complement the simulator.
//!
//! The simulator measures; these models predict. Each one takes the same
//! parameters as the scenario keys it describes, so a reproduction can put the
//! two side by side (and a run-time controller can invert the model).

pub mod arq;
pub mod emodel;
pub mod loss_volume;
pub mod mqam;
pub mod ps;

pub use arq::ArqModel;
pub use emodel::EModel;
pub use loss_volume::{LossVolume, LossVolumeInput};
pub use ps::Ps;
