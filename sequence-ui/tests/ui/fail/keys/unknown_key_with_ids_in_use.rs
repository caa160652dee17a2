use mongo_sequence::SequentialId;
use serde::Serialize;

// The derive fails on the misspelled key alone: the code below, which uses the IDs as the
// `String`s the field declares, adds no error of its own.
#[derive(Serialize, SequentialId)]
#[seq(name = "ticket", prefix = "'T-'", widht = 4)]
struct Ticket {
    #[seq(id)]
    code: String,
}

async fn code_lengths(
    coll: &mongodb::Collection<Ticket>,
    ticket: &mut Ticket,
) -> mongo_sequence::Result<usize> {
    let code = ticket.insert_with_id(coll).await?;
    let next = Ticket::next_id(coll).await?;
    Ok(code.len() + next.trim_start_matches("T-").len())
}

fn main() {
    let _ = code_lengths;
}
