//! pcap capture (being written).
