//! A `cuobjdump -sass` listing: its functions, each a name and its instructions in address
//! order.

use crate::instruction::{Instruction, ParseError};

/// One function of a listing (an entry point, with the subroutines ptxas placed after its
/// exits).
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub instructions: Vec<Instruction>,
}

/// Splits a listing at its `Function : NAME` headers and reads each function's
/// instructions.
pub fn functions(listing: &str) -> Result<Vec<Function>, ParseError> {
    let mut out: Vec<Function> = Vec::new();
    for line in listing.lines() {
        if let Some(name) = line.trim().strip_prefix("Function :") {
            out.push(Function {
                name: name.trim().to_string(),
                instructions: Vec::new(),
            });
        } else if let Some(instruction) = Instruction::parse(line)? {
            match out.last_mut() {
                Some(f) => f.instructions.push(instruction),
                None => {
                    return Err(ParseError {
                        line: line.to_string(),
                        reason: "an instruction before any `Function :` header",
                    });
                }
            }
        }
    }
    Ok(out)
}
