from pipeline.wh40k import console

console()
