from pipeline.wh40k import main

main()
