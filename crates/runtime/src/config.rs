//! Layered configuration, once for every service: defaults < TOML
//! `--config` file < `KEELSON_*` environment < flags.
//!
//! A service declares one flags struct that is both a `clap::Parser` (each
//! flag with `env = "KEELSON_<FLAG>"`, every value an `Option`) and a serde
//! type whose keys are the flag names (`rename_all = "kebab-case"`), with
//! the [`CommonFlags`] flattened in. clap layers the environment under the
//! flags; [`layer`] puts the file under both, key by key, and rejects keys
//! that are not flag names; the service fills what is still unset with its
//! defaults.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::ServiceError;

/// The flags every service has: `--listen`, `--config` and
/// `--metrics-bind-address`.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CommonFlags {
    /// Listen address; port 0 picks a free port
    #[arg(long, env = "KEELSON_LISTEN", value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// TOML config file whose keys are the flag names
    #[arg(long, env = "KEELSON_CONFIG", value_name = "FILE")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Where /metrics is served (HOST:PORT; 0 turns it off) [default: the
    /// --listen host, its port + 2000]
    #[arg(long, env = "KEELSON_METRICS_BIND_ADDRESS", value_name = "ADDR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_bind_address: Option<String>,
}

impl CommonFlags {
    /// The `--listen` address, or the service's `default` (its
    /// `DEFAULT_LISTEN`, a literal address that its tests resolve).
    ///
    /// # Panics
    ///
    /// If `default` is not a socket address: a bug in the service.
    pub fn listen_or(&self, default: &str) -> SocketAddr {
        self.listen.unwrap_or_else(|| {
            default
                .parse()
                .unwrap_or_else(|e| panic!("default listen address {default:?}: {e}"))
        })
    }
}

/// The flags of a service, readable from argv, the environment and the
/// config file alike.
pub trait ServiceFlags: clap::Parser + Serialize + DeserializeOwned {
    /// The resolved configuration: the flags with the defaults filled in.
    type Config: From<Self>;

    /// The flags every service has.
    fn common(&self) -> &CommonFlags;

    /// Resolve flags and env over the config file over the defaults.
    fn into_config(self) -> Result<Self::Config, ServiceError> {
        let flags = layer(self)?;
        crate::listen::set_metrics_bind(flags.common().metrics_bind_address.as_deref())?;
        Ok(Self::Config::from(flags))
    }

    /// The `--config` file, if one was given.
    fn config_file(&self) -> Option<&Path> {
        self.common().config.as_deref()
    }
}

/// Declare a service's flags struct and implement [`ServiceFlags`] for it:
/// the clap command (its name, `--version`, and `about`), the clap and
/// serde derives with kebab-case keys, and the [`CommonFlags`] flattened in
/// as its last field, `common`.
///
/// ```text
/// keelson_runtime::service_flags! {
///     "keelson-x", about = "Keelson x service",
///     pub struct Cli => Config {
///         /// Data directory
///         #[arg(long, env = "KEELSON_DATA_DIR", value_name = "DIR")]
///         pub data_dir: Option<PathBuf>,
///     }
/// }
/// ```
///
/// The calling crate depends on `clap` and `serde`, which the derives name.
#[macro_export]
macro_rules! service_flags {
    (
        $name:literal, about = $about:literal,
        $(#[$meta:meta])*
        $vis:vis struct $flags:ident => $config:ty {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $field_ty:ty),* $(,)?
        }
    ) => {
        #[derive(Debug, clap::Parser, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "kebab-case")]
        #[command(name = $name, version, about = $about)]
        #[doc = concat!(
            "The command line of `", $name, "`: each flag is also read from ",
            "`KEELSON_<FLAG>` and, by its name, from the `--config` file."
        )]
        $(#[$meta])*
        $vis struct $flags {
            $($(#[$field_meta])* $field_vis $field: $field_ty,)*
            /// `--listen` and `--config`.
            #[command(flatten)]
            #[serde(flatten)]
            pub common: $crate::CommonFlags,
        }

        impl $crate::ServiceFlags for $flags {
            type Config = $config;

            fn common(&self) -> &$crate::CommonFlags {
                &self.common
            }
        }
    };
}

/// The config-file keys of `F`: its long flag names but `--config`.
fn file_keys<F: clap::CommandFactory>() -> Vec<String> {
    F::command()
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !matches!(*l, "config" | "help" | "version"))
        .map(str::to_string)
        .collect()
}

/// Fill every flag still unset (neither on the command line nor in the
/// environment) from the `--config` file, if there is one. The result's
/// own `--config` is unset: the file has been read.
pub fn layer<F: ServiceFlags>(flags: F) -> Result<F, ServiceError> {
    let Some(path) = flags.config_file() else {
        return Ok(flags);
    };
    let file = read_file(path)?;
    let keys = file_keys::<F>();
    if let Some(unknown) = file.keys().find(|k| !keys.contains(k)) {
        let expected: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
        return Err(file_error(
            path,
            format!(
                "unknown field `{unknown}`, expected one of {}",
                expected.join(", ")
            ),
        ));
    }
    let file_flags = typed_file::<F>(path, &file)?;
    let mut merged = to_object(&file_flags, path)?;
    for (key, value) in to_object(&flags, path)? {
        // Unset: `None`, or a list flag given no values.
        let unset = value.is_null() || value.as_array().is_some_and(Vec::is_empty);
        if !unset {
            merged.insert(key, value);
        }
    }
    serde_json::from_value(Value::Object(merged)).map_err(|e| file_error(path, e.to_string()))
}

/// The file's top-level table.
fn read_file(path: &Path) -> Result<Map<String, Value>, ServiceError> {
    config::Config::builder()
        .add_source(config::File::from(path).format(config::FileFormat::Toml))
        .build()
        .and_then(|c| c.try_deserialize::<Map<String, Value>>())
        .map_err(|e| ServiceError::ConfigFile {
            path: path.to_path_buf(),
            source: Box::new(e),
        })
}

/// The file's table as flags; a bad value is reported with its key.
fn typed_file<F: DeserializeOwned>(
    path: &Path,
    file: &Map<String, Value>,
) -> Result<F, ServiceError> {
    match serde_json::from_value(Value::Object(file.clone())) {
        Ok(f) => Ok(f),
        Err(whole) => {
            // Find the key at fault, one at a time, for a precise message.
            for (key, value) in file {
                let one = Map::from_iter([(key.clone(), value.clone())]);
                if let Err(e) = serde_json::from_value::<F>(Value::Object(one)) {
                    let reason = e.to_string();
                    return Err(ServiceError::InvalidValue {
                        key: key.clone(),
                        value: match value {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        },
                        reason,
                    });
                }
            }
            Err(file_error(path, whole.to_string()))
        }
    }
}

fn to_object<T: Serialize>(value: &T, path: &Path) -> Result<Map<String, Value>, ServiceError> {
    match serde_json::to_value(value) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Ok(Map::new()),
        Err(e) => Err(file_error(path, e.to_string())),
    }
}

fn file_error(path: &Path, reason: String) -> ServiceError {
    ServiceError::ConfigFile {
        path: path.to_path_buf(),
        source: reason.into(),
    }
}

#[cfg(test)]
mod tests;
