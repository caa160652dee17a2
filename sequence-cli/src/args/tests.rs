//! The command line's flags against the keys of a sequence's options.

use std::collections::BTreeSet;

use clap::CommandFactory;
use sequence_rules::Key;

use super::{flag, Cli};

/// Every long flag of every command, with the command's name.
fn flags() -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let cli = Cli::command();
    let mut commands = vec![&cli];
    while let Some(command) = commands.pop() {
        for arg in command.get_arguments() {
            if let Some(long) = arg.get_long() {
                found.insert((command.get_name().to_owned(), format!("--{long}")));
            }
        }
        commands.extend(command.get_subcommands());
    }
    found
}

#[test]
fn every_flag_of_a_key_is_a_flag_of_a_command() {
    let flags = flags();
    let mut given = 0;
    for &key in Key::ALL {
        let Some(flag) = flag(key) else { continue };
        given += 1;
        assert!(
            flags.iter().any(|(_, f)| f == flag),
            "`{flag}` (key `{}`) is no command's flag",
            key.name()
        );
    }
    assert!(given > 10, "{given} keys have a flag");
}

#[test]
fn every_flag_named_for_a_key_gives_that_key() {
    // A flag spelled as a key's name gives that key: `flag` says so.
    for (command, long) in flags() {
        let Some(key) = Key::ALL
            .iter()
            .find(|key| format!("--{}", key.name().replace('_', "-")) == long)
        else {
            continue;
        };
        // `--scope F=V` names one scope value of a counter, not the scope's fields; `--name`
        // picks sequences by their name (or a pattern of names), which is not an option of
        // one.
        if matches!(key, Key::Scope | Key::Name) {
            assert_eq!(flag(*key), None);
            continue;
        }
        assert_eq!(
            flag(*key),
            Some(long.as_str()),
            "`{command} {long}` gives the key `{}`",
            key.name()
        );
    }
}
