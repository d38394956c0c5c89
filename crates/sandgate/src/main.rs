//! The `sandgate` command.

fn main() {
    std::process::exit(0);
}
