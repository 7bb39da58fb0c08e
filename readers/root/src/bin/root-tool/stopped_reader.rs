//! A reader of the output that stopped early (`root-tool dump ... | head`) is not a failure of
//! the command: shared by `root-tool` and `root-readspeed`.

use anyhow::Result;

/// `result`, with an error that comes of a closed standard output (broken pipe) made a success.
pub(crate) fn ok_if_reader_stopped(result: Result<()>) -> Result<()> {
    match result {
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            Ok(())
        }
        other => other,
    }
}
