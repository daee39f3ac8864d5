//! Sizes of the per-flow and per-packet structs (issue 38's scale work):
//! `cargo run --profile dev-release --example sizes`.
use linklab_core::tcp::{
    rack::Rack, rate::RateSampler, Scoreboard, TcpConfig, TcpReceiver, TcpSender,
};
use std::mem::size_of;

fn main() {
    for (name, size) in [
        ("TcpSender", size_of::<TcpSender>()),
        ("TcpReceiver", size_of::<TcpReceiver>()),
        ("TcpConfig", size_of::<TcpConfig>()),
        ("Scoreboard", size_of::<Scoreboard>()),
        (
            "Segment",
            size_of::<linklab_core::tcp::scoreboard::Segment>(),
        ),
        ("Rack", size_of::<Rack>()),
        ("RateSampler", size_of::<RateSampler>()),
        ("FlowMetrics", size_of::<linklab_core::net::FlowMetrics>()),
        ("FlowSpec", size_of::<linklab_core::net::FlowSpec>()),
        ("NetLink", size_of::<linklab_core::net::NetLink>()),
        ("Packet", size_of::<linklab_core::Packet>()),
        ("WiredLink", size_of::<linklab_core::link::WiredLink>()),
        (
            "WiredDirection",
            size_of::<linklab_core::link::WiredDirection>(),
        ),
        ("WiredConfig", size_of::<linklab_core::link::WiredConfig>()),
        ("LinkStats", size_of::<linklab_core::link::LinkStats>()),
        ("Queue", size_of::<linklab_core::aqm::Queue>()),
        ("Occupancy", size_of::<linklab_core::aqm::Occupancy>()),
        ("QueueStats", size_of::<linklab_core::aqm::QueueStats>()),
        ("Red", size_of::<linklab_core::aqm::red::Red>()),
        ("RedConfig", size_of::<linklab_core::aqm::red::RedConfig>()),
    ] {
        println!("{name:14} {size:6} bytes");
    }
}
