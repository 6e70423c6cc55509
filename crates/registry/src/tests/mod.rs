mod builtin;
mod generations;
mod strategies;
