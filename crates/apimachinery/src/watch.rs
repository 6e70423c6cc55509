//! kube's `watch.EventType`: the one type of a watch event, shared by the
//! store's change stream, the watch cache and the encoders of watch frames.

/// The type of a watch event (`metav1.WatchEvent.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
    /// No change: every change up to the event's revision has been
    /// delivered. In the store's change stream this is etcd's progress
    /// notification; in a watch stream, kube's bookmark.
    Bookmark,
    /// The watch failed; the event carries a `Status`.
    Error,
}

impl EventType {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
            EventType::Bookmark => "BOOKMARK",
            EventType::Error => "ERROR",
        }
    }

    /// Whether the event reports a change of an object.
    pub fn is_change(self) -> bool {
        matches!(
            self,
            EventType::Added | EventType::Modified | EventType::Deleted
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kubes() {
        let all = [
            EventType::Added,
            EventType::Modified,
            EventType::Deleted,
            EventType::Bookmark,
            EventType::Error,
        ];
        let names: Vec<_> = all.iter().map(|t| t.as_str()).collect();
        assert_eq!(names, ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);
        let changes: Vec<_> = all.iter().map(|t| t.is_change()).collect();
        assert_eq!(changes, [true, true, true, false, false]);
    }
}
