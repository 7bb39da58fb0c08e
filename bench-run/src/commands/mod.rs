//! The subcommands: argument handling and I/O around the library, one file per subcommand;
//! [`support`] holds what they share (opening the ledger, naming runs, recording, the verdict
//! settings), and `crate::dispatch` picks one per command line.

pub(crate) mod ab;
pub(crate) mod bisect;
pub(crate) mod calibrate;
pub(crate) mod calibrate_layouts;
pub(crate) mod compare;
pub(crate) mod confirm;
pub(crate) mod gate;
pub(crate) mod import;
pub(crate) mod ledger;
pub(crate) mod log;
pub(crate) mod profile;
pub(crate) mod push;
pub(crate) mod ratio;
pub(crate) mod run;
pub(crate) mod support;
