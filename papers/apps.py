from django.apps import AppConfig


class PapersConfig(AppConfig):
    name = "papers"

    def ready(self) -> None:
        """Give the ontology the reader of page texts and table rows its quote display uses (ontology.quotes):
        papers reads the ontology, so the ontology cannot import papers."""
        from ontology.services import use_page_reader  # noqa: PLC0415 - apps load before their modules
        from papers.selectors import quoted_pages  # noqa: PLC0415

        use_page_reader(quoted_pages)
