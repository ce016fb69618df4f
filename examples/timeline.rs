//! Prints one scenario's per-second upstream attempts and 429s: `cargo run --release --example timeline -- "<scenario name>" [seed]`.
fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "all down 15 s, then back".into());
    let seed = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut every = breakwater_rpc::simulation::scenarios::all();
    every.extend(breakwater_rpc::simulation::scenarios::one_process());
    every.extend(breakwater_rpc::simulation::scenarios::processes());
    let Some(s) = every.into_iter().find(|s| s.name == name) else {
        eprintln!("unknown scenario {name:?}");
        std::process::exit(2);
    };
    let (r, c) = breakwater_rpc::simulation::run_with_counters(&s, seed);
    print!("{}", breakwater_rpc::simulation::table(&[r]));
    let per_second: Vec<u64> = c.per_100ms.chunks(10).map(|w| w.iter().sum()).collect();
    println!("\nupstream attempts per second: {per_second:?}");
    println!("429s per second: {:?}", c.limited_per_second);
    for (i, v) in c.per_second_by_provider.iter().enumerate() {
        println!("provider {i}: {v:?}");
    }
}
