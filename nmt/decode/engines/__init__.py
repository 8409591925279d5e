"""Translation engines: the interface every engine offers (engine.py), what each can do
(capabilities.py), nmt's own (torch_engine.py, ensembles in ensemble.py) and CTranslate2's."""
