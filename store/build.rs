//! Rebuilds the store when a migration is added or changed: `sqlx::migrate!` embeds
//! `migrations/<engine>/` at compile time, and cargo does not watch that folder by itself, so an
//! incremental build would go on embedding the migrations it last saw (a new file ignored).

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
