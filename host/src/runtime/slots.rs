//! The slot table: one owner per replacement slot across every enabled plugin
//! (spec §7). A second claimant fails the generation build naming both.

use std::collections::BTreeMap;

use reasonix_protocol::points::Slot;

/// Two plugins claim the same slot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "replacement slot `{slot}` is claimed by both plugin `{first}` and plugin `{second}`; \
     disable one of them (`reasonix plugin disable <name>`) or remove the slot from its \
     manifest's runtime.replaces"
)]
pub struct SlotCollision {
    pub slot: String,
    pub first: String,
    pub second: String,
}

/// Slot → owning plugin id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlotTable {
    owners: BTreeMap<Slot, String>,
}

impl SlotTable {
    /// Build from each plugin's claimed slots, in registration order. The
    /// first claimant of a slot is named first in a collision.
    pub fn build<'a, I, S>(claims: I) -> Result<SlotTable, SlotCollision>
    where
        I: IntoIterator<Item = (&'a str, S)>,
        S: IntoIterator<Item = &'a Slot>,
    {
        let mut owners: BTreeMap<Slot, String> = BTreeMap::new();
        for (plugin, slots) in claims {
            for slot in slots {
                match owners.get(slot) {
                    Some(owner) if owner != plugin => {
                        return Err(SlotCollision {
                            slot: slot.to_string(),
                            first: owner.clone(),
                            second: plugin.to_string(),
                        });
                    }
                    Some(_) => {}
                    None => {
                        owners.insert(slot.clone(), plugin.to_string());
                    }
                }
            }
        }
        Ok(SlotTable { owners })
    }

    /// The owner of `slot`, if any.
    pub fn owner(&self, slot: &Slot) -> Option<&str> {
        self.owners.get(slot).map(String::as_str)
    }

    /// The owner of `tool:<name>`, found without allocating.
    pub fn tool_owner(&self, name: &str) -> Option<&str> {
        self.owners.iter().find_map(|(slot, owner)| match slot {
            Slot::Tool(tool) if tool == name => Some(owner.as_str()),
            _ => None,
        })
    }

    /// Whether `plugin` owns any slot (which makes it required-class, §5).
    pub fn owns_any(&self, plugin: &str) -> bool {
        self.owners.values().any(|owner| owner == plugin)
    }

    /// Every (slot, owner), sorted by slot.
    pub fn iter(&self) -> impl Iterator<Item = (&Slot, &str)> {
        self.owners
            .iter()
            .map(|(slot, owner)| (slot, owner.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_slots_build_and_resolve() {
        let a = [Slot::SystemPrompt, Slot::Tool("read_file".into())];
        let b = [Slot::Context];
        let table = SlotTable::build([("alpha", a.iter()), ("beta", b.iter())]).unwrap();
        assert_eq!(table.owner(&Slot::SystemPrompt), Some("alpha"));
        assert_eq!(table.owner(&Slot::Context), Some("beta"));
        assert_eq!(table.owner(&Slot::Permission), None);
        assert!(table.owns_any("alpha"));
        assert!(!table.owns_any("gamma"));
    }

    #[test]
    fn collision_names_both_plugins_and_the_slot() {
        let a = [Slot::Provider("plugin/alpha/echo/small".into())];
        let b = [Slot::Provider("plugin/alpha/echo/small".into())];
        let error = SlotTable::build([("alpha", a.iter()), ("beta", b.iter())]).unwrap_err();
        assert_eq!(error.slot, "provider:plugin/alpha/echo/small");
        assert_eq!(error.first, "alpha");
        assert_eq!(error.second, "beta");
        let text = error.to_string();
        assert!(
            text.contains("`alpha`") && text.contains("`beta`"),
            "{text}"
        );
    }

    #[test]
    fn a_plugin_repeating_its_own_slot_is_not_a_collision() {
        let a = [Slot::Compaction, Slot::Compaction];
        let table = SlotTable::build([("alpha", a.iter())]).unwrap();
        assert_eq!(table.owner(&Slot::Compaction), Some("alpha"));
    }
}
