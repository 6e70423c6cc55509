//! The installed kubectl against a started Keelson, in both modes (the
//! suite itself is `support/kubectl_suite.rs`).

mod support;

use support::{kubectl_suite, Cluster, Mode};

#[test]
fn kubectl_embedded() {
    kubectl_suite::run(&Cluster::start(Mode::Embedded));
}

#[test]
fn kubectl_distributed() {
    kubectl_suite::run(&Cluster::start(Mode::Distributed));
}
