use clap::Parser;

fn main() {
    std::process::exit(mesh_guard::main_with(mesh_guard::cli::Args::parse()));
}
