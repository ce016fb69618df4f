//! Prints the fleet simulation's table: `cargo run --release --example simulate [seed]`.

fn main() {
    let seed = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let started = std::time::Instant::now();
    let reports: Vec<_> =
        breakwater_rpc::simulation::scenarios::all().iter().map(|s| breakwater_rpc::simulation::run(s, seed)).collect();
    println!("Fleet simulation, seed {seed}: 1,000 independent clients × 0.5 req/s, 60 s of virtual time each.\n");
    print!("{}", breakwater_rpc::simulation::table(&reports));
    for r in reports.iter().filter(|r| !r.failures.is_empty()) {
        println!("\n{}: failed reads by reason {:?}", r.name, r.failures);
    }
    let one_process: Vec<_> = breakwater_rpc::simulation::scenarios::one_process()
        .iter()
        .map(|s| breakwater_rpc::simulation::run(s, seed))
        .collect();
    println!("\nOne process (one realm): relayers alone vs sharing what they learn (each row says how many).\n");
    print!("{}", breakwater_rpc::simulation::table(&one_process));
    for r in one_process.iter().filter(|r| !r.failures.is_empty()) {
        println!("\n{}: failed reads by reason {:?}", r.name, r.failures);
    }
    eprintln!("\n(simulated in {:.1} s of wall time)", started.elapsed().as_secs_f64());
}
