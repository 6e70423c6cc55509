//! Admission as a client sees it: exact status codes, messages, warnings
//! and admitted objects.

mod admission_config;
mod decode;
mod defaults;
mod defaults_apis;
mod defaults_core;
mod defaults_groups;
mod fuzz;
mod lifecycle;
mod plugins;
mod pod_security;
mod support;
mod validate;
mod validate_custom;
mod validate_issue22;
mod validate_kinds;
mod validate_misc_kinds;
mod validate_networking;
mod validate_pod;
mod validate_pod_env;
mod validate_pod_scheduling;
mod validate_pod_security;
mod validate_pod_volumes;
mod validate_resource;
mod validate_service_ips;
mod validate_storage;
mod validate_updates;
mod validate_warnings;
mod validate_workloads;
