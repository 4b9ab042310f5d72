// What "Concurrency and the three call forms" assumes: where the reader's file is.
let path = "snacks.sqlite"
