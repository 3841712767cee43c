from consulta.frontends.cli import main

main()
