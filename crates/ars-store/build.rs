//! `sqlx::migrate!` embeds the migration files when the crate compiles; a new or changed file
//! must compile it again (cargo tracks sources, not the directories a macro reads).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
