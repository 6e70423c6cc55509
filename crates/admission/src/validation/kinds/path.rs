//! Field paths as kube's `field.Path` prints them:
//! `spec.template.spec.containers[0].ports[1].containerPort`,
//! `metadata.labels[app]`.

use std::fmt;

/// A field path; cheap to extend (each child is a new string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Path(String);

impl Path {
    /// The root path named `name` (`spec`, `metadata`, ...); an empty name
    /// is the object root.
    pub fn new(name: &str) -> Path {
        Path(name.to_string())
    }

    /// `self.name`.
    pub fn child(&self, name: &str) -> Path {
        if self.0.is_empty() {
            Path(name.to_string())
        } else {
            Path(format!("{}.{name}", self.0))
        }
    }

    /// `self[i]`.
    pub fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    /// `self[key]` (map keys are printed bare, as kube does).
    pub fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }

    /// The path as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn prints_like_field_path() {
        let p = Path::new("spec")
            .child("containers")
            .index(0)
            .child("ports");
        assert_eq!(p.as_str(), "spec.containers[0].ports");
        assert_eq!(Path::new("data").key("..").as_str(), "data[..]");
        assert_eq!(Path::new("").child("spec").as_str(), "spec");
    }
}
