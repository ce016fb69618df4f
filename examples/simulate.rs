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
    let processes: Vec<_> = breakwater_rpc::simulation::scenarios::processes()
        .iter()
        .map(|s| breakwater_rpc::simulation::run(s, seed))
        .collect();
    println!("\nProcesses (one realm each) on one key, with and without a fleet store.\n");
    print!("{}", breakwater_rpc::simulation::table(&processes));
    for r in &processes {
        let per_thousand = 1000.0 * r.store_asks as f64 / r.logical.max(1) as f64;
        println!("\n{}: store lease asks per 1,000 requests {per_thousand:.1}; failed reads {:?}", r.name, r.failures);
    }
    eprintln!("\n(simulated in {:.1} s of wall time)", started.elapsed().as_secs_f64());
}
