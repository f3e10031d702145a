//! `rxpipe passes`: every stage with its arguments and backends.

use crate::Res;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Res {
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(rxpipe::passes::registry())?
        );
    } else {
        print!("{}", rxpipe::passes::describe());
        println!(
            "\nChoose stages with --pass NAME[:ARG[:ARG...]] on render and view (repeatable or comma-separated),\nor `passes = [\"normals:angle\"]` in a scene file; an argument is key=value, or a bare value for the first one."
        );
    }
    Ok(())
}
